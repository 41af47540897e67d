"""What a designed die may look like: the per-die constraints a search keeps
(:class:`DieConstraints`), the repair that brings a start set within them, the per-die diff of a
proposed set against its start (:func:`dice_changes`) and the printability warnings
(:func:`printability_warnings`).

A *vowel face* is the report's (:func:`pipeline.stats.vowel_face`): a face holding a, e, i, o or
u, Qu excluded (its u only follows its q); a *rare face* holds j, k, q, x or z (Qu is one:
:func:`pipeline.stats.rare_face`). So a die the designer is told has "no vowel" is the die
whose boards the report's "at most 3 vowels" driver counts against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pipeline.boards import BLANK, DIE_BLANK_TOKEN, QU
from pipeline.errors import ConfigError
from pipeline.stats import rare_face, vowel_face

Dice = tuple[tuple[str, ...], ...]

# printability: more copies of one letter on a die than this is flagged when no --max-same is set
WARN_SAME = 2
# a "dump die": no vowel and at least this many rare faces (the faces nobody wants, on one die)
DUMP_RARE = 2


def vowels(die: Sequence[str]) -> int:
    """The die's vowel faces (Qu and blanks excluded)."""
    return sum(1 for f in die if f != BLANK and vowel_face(f))


def rares(die: Sequence[str]) -> int:
    """The die's faces that hold a rare letter (j, k, q, x, z; Qu included)."""
    return sum(1 for f in die if f != BLANK and rare_face(f))


def most_same(die: Sequence[str]) -> int:
    """The most copies of one (non-blank) face on the die."""
    counts = Counter(f for f in die if f != BLANK)
    return max(counts.values(), default=0)


def show(die: Sequence[str]) -> str:
    return " ".join(f or DIE_BLANK_TOKEN for f in die)


@dataclass(frozen=True)
class DieConstraints:
    """What every die of a set the search proposes must meet (None/False: no constraint).

    ``min_vowels``: at least this many vowel faces on each die; ``max_rare``: at most this many
    rare faces; ``max_same``: no face more than this many times on a die; ``keep_qu_die``:
    every Qu face stays on its die (no move swaps or replaces it).

    >>> DieConstraints(min_vowels=1).problems(("h", "l", "n", "n", "r", "z"))
    ['no vowel face (at least 1)']
    """

    min_vowels: int | None = None
    max_rare: int | None = None
    max_same: int | None = None
    keep_qu_die: bool = False

    @property
    def any(self) -> bool:
        return (self.min_vowels, self.max_rare, self.max_same) != (None, None, None) or self.keep_qu_die

    def excess(self, die: Sequence[str]) -> int:
        """How far the die is from meeting the constraints (0: it meets them)."""
        out = 0
        if self.min_vowels is not None:
            out += max(0, self.min_vowels - vowels(die))
        if self.max_rare is not None:
            out += max(0, rares(die) - self.max_rare)
        if self.max_same is not None:
            counts = Counter(f for f in die if f != BLANK)
            out += sum(max(0, k - self.max_same) for k in counts.values())
        return out

    def fits(self, die: Sequence[str]) -> bool:
        return self.excess(die) == 0

    def problems(self, die: Sequence[str]) -> list[str]:
        """What the die breaks, in words."""
        out = []
        if self.min_vowels is not None and vowels(die) < self.min_vowels:
            n = vowels(die)
            have = "no vowel face" if n == 0 else f"{n} vowel face{'s' if n > 1 else ''}"
            out.append(f"{have} (at least {self.min_vowels})")
        if self.max_rare is not None and rares(die) > self.max_rare:
            out.append(f"{rares(die)} rare faces (at most {self.max_rare})")
        if self.max_same is not None:
            for face, k in Counter(f for f in die if f != BLANK).items():
                if k > self.max_same:
                    out.append(f"{k} x {face} (at most {self.max_same} of a letter)")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_reachable(dice: Dice, c: DieConstraints, letters: Sequence[str] | None, keep_qu: bool) -> None:
    """Refuse (ConfigError, exit 2) constraints no set of these dice can meet: more vowel faces
    than a die has room for; Qu faces that must stay (``keep_qu``: their number; ``keep_qu_die``:
    their die) where the rare faces allowed cannot hold them; or (``letters`` None: faces fixed,
    only swaps) more vowels than the set holds, more rare faces or copies of a letter than the
    dice may hold."""
    n = len(dice)
    if c.max_rare is not None:
        if c.keep_qu_die and any(d.count(QU) > c.max_rare for d in dice):
            raise ConfigError(
                f"--max-rare {c.max_rare}: a die holds more Qu faces than that, and --keep-qu-die "
                "keeps them there"
            )
        qu = sum(d.count(QU) for d in dice)
        if letters is not None and keep_qu and qu > n * c.max_rare:
            raise ConfigError(
                f"--max-rare {c.max_rare}: the set's {qu} Qu faces are rare and stay (--keep-qu); "
                f"{n} dice hold at most {n * c.max_rare}"
            )
    room = min(sum(1 for f in d if f != BLANK) for d in dice)
    if c.min_vowels is not None and c.min_vowels > room:
        raise ConfigError(
            f"--min-vowels {c.min_vowels}: a die has only {room} face{'' if room == 1 else 's'} that "
            f"{'is' if room == 1 else 'are'} not blank"
        )
    if letters is None:
        have = sum(vowels(d) for d in dice)
        if c.min_vowels is not None and have < n * c.min_vowels:
            raise ConfigError(
                f"--min-vowels {c.min_vowels}: the set has {have} vowel faces and {n} dice need "
                f"{n * c.min_vowels}; with --faces fixed no move adds a vowel (--faces free may)"
            )
        rare = sum(rares(d) for d in dice)
        if c.max_rare is not None and rare > n * c.max_rare:
            raise ConfigError(
                f"--max-rare {c.max_rare}: the set has {rare} rare faces and {n} dice hold at most "
                f"{n * c.max_rare}; with --faces fixed no move removes one (--faces free may)"
            )
        if c.max_same is not None:
            commonest = Counter(f for d in dice for f in d if f != BLANK).most_common(1)  # [] if all blank
            for face, k in commonest:
                if k > n * c.max_same:
                    raise ConfigError(
                        f"--max-same {c.max_same}: the set has {k} {face} faces and {n} dice hold at "
                        f"most {n * c.max_same}; with --faces fixed no move removes one (--faces free may)"
                    )
    elif c.min_vowels is not None and not any(vowel_face(f) for f in letters):
        raise ConfigError(f"--min-vowels {c.min_vowels}: the word list's alphabet has no vowel")


def repair(
    dice: Dice,
    c: DieConstraints,
    propose_any: Callable[[Dice, np.random.Generator], Any],
    rng: np.random.Generator,
    tries: int = 20_000,
    patience: int = 2_000,
) -> tuple[Dice, list[str]]:
    """The start set brought within the constraints by the search's own moves
    (``propose_any``: a random move, constraints aside) and the moves' texts, in order: a move
    is kept when it lowers the dice's total excess (:meth:`DieConstraints.excess`), so the set
    changes no more than it must; after ``patience`` moves in a row that would not, one that
    leaves it the same is kept, to cross flat ground. A ConfigError (exit 2) naming a die still
    outside after ``tries`` moves in a row that lowered nothing. A set already within is
    returned as it is."""
    total = sum(c.excess(d) for d in dice)
    texts: list[str] = []
    stuck = since = 0  # moves since the last one kept, since the last that lowered the excess
    while total > 0 and since < tries:
        move = propose_any(dice, rng)
        if move is None:
            break
        after = move.apply(dice)
        changed = {move.a, move.b} - {-1}
        delta = sum(c.excess(after[k]) - c.excess(dice[k]) for k in changed)
        since = 0 if delta < 0 else since + 1
        if delta < 0 or (delta == 0 and stuck >= patience):
            texts.append(move.text(dice))
            dice, total, stuck = after, total + delta, 0
        else:
            stuck += 1
    if total == 0:
        return dice, texts
    broken = [
        f"die {k + 1} ({show(d)}): {'; '.join(c.problems(d))}" for k, d in enumerate(dice) if not c.fits(d)
    ]
    raise ConfigError(
        f"the start set cannot be brought within the per-die constraints by the search's moves "
        f"({len(broken)} dice still outside, e.g. {broken[0]}); loosen them or start from other dice"
    )


def dice_changes(start: Dice, proposed: Dice) -> list[dict[str, Any]]:
    """Per die whose faces changed (as a multiset): its number (from 1), its faces before and
    after, and the faces it lost and gained.

    >>> dice_changes((("a", "b"), ("c", "d")), (("a", "d"), ("c", "b")))[0]["removed"]
    ['b']
    """
    out = []
    for k, (a, b) in enumerate(zip(start, proposed, strict=True)):
        lost = Counter(a) - Counter(b)
        got = Counter(b) - Counter(a)
        if not lost and not got:
            continue
        out.append(
            {
                "die": k + 1,
                "start": [f or DIE_BLANK_TOKEN for f in a],
                "proposed": [f or DIE_BLANK_TOKEN for f in b],
                "removed": sorted(f or DIE_BLANK_TOKEN for f in lost.elements()),
                "added": sorted(f or DIE_BLANK_TOKEN for f in got.elements()),
            }
        )
    return out


def die_warnings(die: Sequence[str], max_same: int | None = None) -> list[str]:
    """What a publisher would question about one die (see :func:`printability_warnings`)."""
    out = []
    rare = [f for f in die if f != BLANK and rare_face(f)]
    no_vowel = vowels(die) == 0 and any(f != BLANK for f in die)
    if no_vowel and len(rare) >= DUMP_RARE:
        out.append(f"a dump die: no vowel and {len(rare)} rare faces ({', '.join(rare)})")
    else:
        if no_vowel:
            out.append("no vowel face")
        if len(rare) >= 2:
            out.append(f"{len(rare)} rare faces on one die ({', '.join(rare)})")
    limit = WARN_SAME if max_same is None else max_same
    for face, k in sorted(Counter(f for f in die if f != BLANK).items()):
        if k > limit:
            out.append(f"{k} x {face} (more than {limit} of a letter)")
    return out


def printability_warnings(start: Dice, proposed: Dice, max_same: int | None = None) -> list[dict[str, Any]]:
    """Per die of the proposed set, what a publisher would question: a die with no vowel face,
    two or more rare faces on one die (j and x together), a letter more than ``max_same`` times
    (2 when not given), and a *dump die* (no vowel and two or more rare faces: the faces nobody
    wants gathered on one die). Each says whether the start's die had it already."""
    out = []
    for k, (a, b) in enumerate(zip(start, proposed, strict=True)):
        before = set(die_warnings(a, max_same))
        for text in die_warnings(b, max_same):
            out.append({"die": k + 1, "faces": show(b), "warning": text, "in_start": text in before})
    return out
