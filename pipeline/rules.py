"""Rule sets as data: minimum word length, scoring table, revisits.

Lengths are counted in letters (a ``qu`` cell adds 2). ``scores`` maps a length to its points;
a word longer than the largest length in the table scores that entry's points, unless
``per_letter_from`` is set, in which case a word of at least that many letters scores
``per_letter`` points per letter (Super Big Boggle: 9+ letters score 2 x letters).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.errors import RulesError

STANDARD_SCORES = {3: 1, 4: 1, 5: 2, 6: 3, 7: 5, 8: 11}
BIG_SCORES = {4: 1, 5: 2, 6: 3, 7: 5, 8: 11}


@dataclass(frozen=True)
class Rules:
    name: str = "boggle"
    min_length: int = 3
    scores: Mapping[int, int] = field(default_factory=lambda: dict(STANDARD_SCORES))
    per_letter_from: int | None = None
    per_letter: int = 0
    revisit: bool = False

    def __post_init__(self) -> None:
        if self.min_length < 1:
            raise RulesError(f"min_length must be >= 1, got {self.min_length}")
        if not self.scores:
            raise RulesError("scores must give points for at least one length")
        for k, v in self.scores.items():
            if not isinstance(k, int) or k < 1 or not isinstance(v, int) or v < 0:
                raise RulesError(f"scores: length {k!r} -> points {v!r} must be positive integers")
        if self.per_letter_from is not None and (self.per_letter_from < 1 or self.per_letter < 0):
            raise RulesError("per_letter_from must be >= 1 and per_letter >= 0")
        # Freeze the mapping in sorted order so equal rules compare and hash equally.
        object.__setattr__(self, "scores", dict(sorted(self.scores.items())))

    def points(self, letters: int) -> int:
        """Points for a word of ``letters`` letters (0 below the minimum length)."""
        if letters < self.min_length:
            return 0
        if self.per_letter_from is not None and letters >= self.per_letter_from:
            return self.per_letter * letters
        best = 0
        for length, pts in self.scores.items():
            if length <= letters:
                best = pts
        return best

    def points_table(self, max_letters: int) -> np.ndarray:
        """``table[n]`` = points for an n-letter word, n = 0..max_letters (int32)."""
        return np.array([self.points(n) for n in range(max_letters + 1)], dtype=np.int32)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["scores"] = {str(k): v for k, v in self.scores.items()}
        return d

    def key(self) -> str:
        """A stable text key (for caches and manifests)."""
        s = ",".join(f"{k}:{v}" for k, v in self.scores.items())
        return (
            f"{self.name};min={self.min_length};scores={s};"
            f"pl={self.per_letter_from}x{self.per_letter};revisit={int(self.revisit)}"
        )


PRESETS: dict[str, Rules] = {
    "boggle": Rules("boggle", 3, dict(STANDARD_SCORES)),
    "big": Rules("big", 4, dict(BIG_SCORES)),
    "superbig": Rules("superbig", 4, dict(BIG_SCORES), per_letter_from=9, per_letter=2),
}

_FIELDS = {f.name for f in dataclasses.fields(Rules)}


def get_rules(name: str = "boggle", **overrides: Any) -> Rules:
    """A named preset with any field overridden (``None`` values are ignored).

    >>> get_rules("boggle", min_length=4).points(4)
    1
    """
    if name not in PRESETS:
        raise RulesError(f"unknown rules {name!r}; choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - _FIELDS
    if unknown:
        raise RulesError(f"unknown rule field(s): {', '.join(sorted(unknown))}")
    changes = {k: v for k, v in overrides.items() if v is not None}
    if "scores" in changes:
        try:
            changes["scores"] = {int(k): int(v) for k, v in dict(changes["scores"]).items()}
        except (TypeError, ValueError):
            raise RulesError("scores must map lengths to integer points") from None
    return dataclasses.replace(PRESETS[name], **changes)


def default_rules_for_shape(rows: int, cols: int) -> str:
    """The preset a board of this shape is played with: ``big`` for 5x5, ``superbig`` for 6x6,
    ``boggle`` for every other shape."""
    return {(5, 5): "big", (6, 6): "superbig"}.get((rows, cols), "boggle")


def resolve_rules(name: str | None, shape: tuple[int, int] | None = None, **overrides: Any) -> Rules:
    """The one rules resolver every command and config uses: the named preset, else the preset of
    ``shape`` (:func:`default_rules_for_shape`; ``boggle`` without a shape), with ``overrides``
    as in :func:`get_rules`."""
    if name is None:
        name = default_rules_for_shape(*shape) if shape else "boggle"
    return get_rules(name, **overrides)
