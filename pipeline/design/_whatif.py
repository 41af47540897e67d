"""What if one die were different? A paired experiment on two runs (``boggle what-if``).

The base set (a dice name or file) and a variant of it (``--swap`` edits, or another file of the
same size) roll ``count`` boards each with the same seed and chunk size. A roll draws the dice
permutation and then one face index per cell from the chunk's stream
(:func:`pipeline.boards.roll_dice_layout`), and neither draw depends on the faces, only on the
number of dice and of faces a die: so every variant board has the same die on every cell and the
same face index of it as its base board (common random numbers), and differs only where a
changed die lies. Both are written as normal runs (``OUT/base``, ``OUT/variant``, resumable,
``boggle analyze``-able); the variant's dice are written as a dice file, ``OUT/variant-dice.txt``,
so the variant run is also ``boggle run --dice OUT/variant-dice.txt`` with the same seed.

A *placement* change is measured the same way: ``placement`` (the variant's policy, e.g. ``"qu:
corner, edge"``) and ``base_placement`` are applied after the same draws
(:func:`pipeline.boards.place_dice`), so a board differs from its base board only where the
policy moved something.

**Measured**: the mean of the per-board differences (variant minus base) with a 95% paired
interval, mean +- 1.96 sd / sqrt(n), and the shares of boards that score higher, lower, the same.

**Predicted**: what the additive face model of the analysis
(:func:`pipeline.analyze._cells.adjusted_effects`, the model behind the report's die values)
fitted on the base run says the change is worth: the change in the changed dice's values, i.e.
the sum over faces of (new share minus old share on the die) x the face's coefficient, with its
interval. It needs the ``[analyze]`` extra, and a coefficient for every face the variant shows
(a face the base boards never show has none: then no prediction, and the reason).

Dice are numbered from 1 in the order of the set, as the report's dice table numbers them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.boards import (
    BLANK,
    DIE_BLANK_TOKEN,
    DiceSet,
    format_dice_text,
    is_face_char,
    load_dice_set,
    normalise_text,
)
from pipeline.config import MAX_WHATIF_BOARDS  # both runs compared in memory: ~200 B a board
from pipeline.errors import ConfigError, InternalError
from pipeline.extras import missing

if TYPE_CHECKING:
    from pipeline.store import PartRef

VARIANT_DICE = "variant-dice.txt"
Z95 = 1.96

_COPY = re.compile(r"^\s*(?:die\s*)?(\d+)\s*=\s*(?:die\s*)?(\d+)\s*$", re.IGNORECASE)
_FACE = re.compile(r"^\s*(?:die\s*)?(\d+)\s*:\s*(\S+)\s*->\s*(\S+)\s*$", re.IGNORECASE)
SWAP_SYNTAX = (
    "'die I = die J' (die I becomes a copy of die J) or 'die I: X -> Y' (a face X of die I becomes Y)"
)


@dataclass(frozen=True)
class Swap:
    """One edit of the variant set; dice numbered from 1."""

    text: str
    die: int
    copy_of: int | None = None  # die I = die J
    old: str | None = None  # die I: X -> Y
    new: str | None = None


def parse_swap(text: str) -> Swap:
    """``'die 15 = die 5'`` or ``'die 15: qu -> u'`` (``_`` a blank face) as a :class:`Swap`."""
    if m := _COPY.match(text):
        return Swap(text, int(m.group(1)), copy_of=int(m.group(2)))
    if m := _FACE.match(text):
        faces = []
        for raw in (m.group(2), m.group(3)):
            face = BLANK if raw == DIE_BLANK_TOKEN else normalise_text(raw)
            if raw != DIE_BLANK_TOKEN and not all(is_face_char(ch) for ch in face):
                raise ConfigError(
                    f"--swap {text!r}: face {raw!r} is not letters (a blank face is {DIE_BLANK_TOKEN})"
                )
            faces.append(face)
        return Swap(text, int(m.group(1)), old=faces[0], new=faces[1])
    raise ConfigError(f"--swap {text!r}: expected {SWAP_SYNTAX}")


def apply_swaps(dice: DiceSet, swaps: Sequence[Swap]) -> DiceSet:
    """``dice`` with the swaps applied in order (a copy copies the die as the earlier swaps left
    it; a face swap replaces the first face X of the die)."""
    out = [list(d) for d in dice.dice]
    n = len(out)

    def check(die: int, swap: Swap) -> int:
        if not 1 <= die <= n:
            raise ConfigError(f"--swap {swap.text!r}: no die {die}; the set has {n} dice, numbered 1-{n}")
        return die - 1

    for s in swaps:
        i = check(s.die, s)
        if s.copy_of is not None:
            out[i] = list(out[check(s.copy_of, s)])
            continue
        assert s.old is not None and s.new is not None
        if s.old not in out[i]:
            shown = " ".join(f or DIE_BLANK_TOKEN for f in out[i])
            raise ConfigError(
                f"--swap {s.text!r}: die {s.die} ({shown}) has no face {s.old or DIE_BLANK_TOKEN!r}"
            )
        out[i][out[i].index(s.old)] = s.new
    return replace(dice, name="variant", title="variant", dice=tuple(tuple(d) for d in out), file=None)


def changed_dice(base: DiceSet, variant: DiceSet) -> list[int]:
    """The dice (numbered from 1) whose faces differ, as multisets."""
    return [
        d + 1 for d, (a, b) in enumerate(zip(base.dice, variant.dice, strict=True)) if sorted(a) != sorted(b)
    ]


@dataclass(frozen=True)
class Prediction:
    """The additive model's gain for the change (None and ``why`` when it has none)."""

    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    why: str = ""


@dataclass
class WhatIfResult:
    """The paired experiment's figures (gains are variant minus base, points a board)."""

    base: DiceSet
    variant: DiceSet
    swaps: list[str]
    changed: list[int]
    base_dir: PartRef  # a local path, or a folder's URL in an object store
    variant_dir: PartRef
    boards: int
    mean_base: float
    mean_variant: float
    gain: float
    gain_low: float | None
    gain_high: float | None
    sd: float | None
    higher: float
    lower: float
    unchanged: float
    boards_differ: float  # share of boards whose faces differ at all
    prediction: Prediction
    runs: list[Any] = field(default_factory=list)  # the two runner.RunSummary
    placement_base: str | None = None  # each run's placement policy (canonical text), None: none
    placement_variant: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": {"dice": self.base.label, "sha256": self.base.sha256, "run_dir": str(self.base_dir)},
            "variant": {
                "dice": self.variant.label,
                "sha256": self.variant.sha256,
                "run_dir": str(self.variant_dir),
                "faces": [list(d) for d in self.variant.dice],
            },
            "swaps": self.swaps,
            "changed_dice": self.changed,
            "placement": {"base": self.placement_base, "variant": self.placement_variant},
            "boards": self.boards,
            "mean_base": self.mean_base,
            "mean_variant": self.mean_variant,
            "gain": self.gain,
            "gain_low": self.gain_low,
            "gain_high": self.gain_high,
            "sd": self.sd,
            "higher": self.higher,
            "lower": self.lower,
            "unchanged": self.unchanged,
            "boards_differ": self.boards_differ,
            "prediction": {
                "gain": self.prediction.estimate,
                "low": self.prediction.low,
                "high": self.prediction.high,
                "why_none": self.prediction.why or None,
            },
        }


def paired_gain(
    base: np.ndarray, variant: np.ndarray
) -> tuple[float, float | None, float | None, float | None]:
    """Mean of ``variant - base`` with its 95% paired interval and the sd of the differences
    (interval and sd None for fewer than 2 boards)."""
    d = np.asarray(variant, dtype=np.float64) - np.asarray(base, dtype=np.float64)
    mean = float(d.mean())
    if len(d) < 2:
        return mean, None, None, None
    sd = float(d.std(ddof=1))
    half = Z95 * sd / math.sqrt(len(d))
    return mean, mean - half, mean + half, sd


def predict_gain(
    boards: Sequence[str], scores: np.ndarray, rows: int, cols: int, base: DiceSet, variant: DiceSet
) -> Prediction:
    """The additive face model's gain (fitted on the base run's boards and scores): for each
    changed die, the new faces' mean coefficient minus the old faces'; with its 95% interval."""
    if missing("analyze"):
        return Prediction(why="the model needs the [analyze] extra: pip install 'boggle-pipeline[analyze]'")
    from pipeline.analyze import adjusted_effects
    from pipeline.stats import BLANK_FACE, decode_boards

    faces, codes = decode_boards(list(boards), rows, cols)
    index = {f: i for i, f in enumerate(faces)}
    w = np.zeros(len(faces))
    for old, new in zip(base.dice, variant.dice, strict=True):
        if sorted(old) == sorted(new):
            continue
        for sides, sign in ((new, 1.0), (old, -1.0)):
            for f in sides:
                label = BLANK_FACE if f == BLANK else f
                if label not in index:
                    return Prediction(
                        why=f"face {f or DIE_BLANK_TOKEN!r} never shows on the base run's boards, "
                        "so the model has no value for it"
                    )
                w[index[label]] += sign / len(sides)
    if not w.any():
        return Prediction(0.0, 0.0, 0.0)
    _, fit, _ = adjusted_effects(codes, faces, np.asarray(scores, dtype=np.float64))
    iv = fit.contrast(w)
    return Prediction(iv.estimate, iv.low, iv.high)


def run_what_if(
    base_spec: str,
    swaps: Sequence[str],
    out: str | os.PathLike[str],
    *,
    count: int,
    seed: int,
    dictionary: str | None = None,
    dice_b: str | None = None,
    shape: str | None = None,
    chunk_size: int | None = None,
    rules: str | None = None,
    n_jobs: int = -1,
    placement: str | None = None,
    base_placement: str | None = None,
    overwrite: bool = False,
    stage: Callable[[str], None] | None = None,
    progress: Callable[[Any], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> WhatIfResult:
    """Run the base and the variant (``OUT/base``, ``OUT/variant``; ``out`` a local folder or
    the URL of one in an object store) and compare them board by board; every bad input is
    refused before anything is written, an ``out`` in a job directory too. ``placement`` places
    the variant's dice by that policy (:func:`pipeline.boards.parse_placement`),
    ``base_placement`` the base's: with the same dice, the experiment measures the placement
    change alone (both runs roll the same draws, and the policy only moves what it names).

    >>> run_what_if("new", ["die 15 = die 5"], "runs/whatif", count=10_000, seed=1)  # doctest: +SKIP
    """
    from pipeline.boards import GENERATORS
    from pipeline.config import check_count
    from pipeline.store import output_location

    check_count("--count", count, 1, MAX_WHATIF_BOARDS, "what-if")
    for spec in (base_spec, dice_b):
        if spec in GENERATORS:
            raise ConfigError(f"{spec!r} is a letter generator, not dice: a what-if changes a set of dice")
    from pipeline.runner import run_job

    base, variant = _base_and_variant(base_spec, swaps, dice_b, shape)
    placements = _placements(base_placement, base, placement, variant)
    loc = output_location(out)  # a local folder, or one of an object store
    base_dir, variant_dir, dice_file = loc.url("base"), loc.url("variant"), loc.url(VARIANT_DICE)
    boards_cfg: dict[str, Any] = {"source": "generate", "count": count, "seed": seed}
    if chunk_size is not None:
        boards_cfg["chunk_size"] = chunk_size
    if shape:
        boards_cfg["shape"] = shape

    def config(dice: str, run_dir: str, policy: str | None) -> Any:
        cfg = {**boards_cfg, "placement": policy} if policy is not None else boards_cfg
        return _run_config(cfg, dice, run_dir, n_jobs=n_jobs, dictionary=dictionary, rules=rules)

    base_cfg = config(base_spec, base_dir, placements[0])  # every config error before a file is written
    from pipeline.store import refuse_inside_job

    # OUT/base and OUT/variant inside a finished run would become part of it
    refuse_inside_job(loc, writes=f" (what-if writes its two runs and {VARIANT_DICE} there)")
    if not overwrite:
        _refuse_other_variant(variant_dir, variant.sha256)
    summaries = []
    if stage is not None:
        stage("base")
    summaries.append(run_job(base_cfg, overwrite=overwrite, progress=progress, note=note))
    # written once the base run stands (a base refused as another run leaves the file alone);
    # the variant's settings are the base's, checked above, and its dice were checked by the swaps
    text = format_dice_text(replace(variant, title=f"what-if variant of {base.label}"))
    if not (loc.is_file(VARIANT_DICE) and loc.read_bytes(VARIANT_DICE) == text.encode("utf-8")):
        loc.write_bytes(VARIANT_DICE, text.encode("utf-8"))
    if stage is not None:
        stage("variant")
    summaries.append(
        run_job(
            config(str(dice_file), variant_dir, placements[1]),
            overwrite=overwrite,
            progress=progress,
            note=note,
        )
    )
    variant = replace(variant, name=dice_file, title=VARIANT_DICE, file=dice_file)

    (sa, boards_a), (sb, boards_b) = _paired_runs(base_dir, variant_dir, count)
    gain, low, high, sd = paired_gain(sa, sb)
    d = sb - sa
    differ = float(np.mean([x != y for x, y in zip(boards_a, boards_b, strict=True)])) if count else 0.0
    rows, cols_ = base_cfg.shape
    if placements[0] != placements[1]:
        prediction = Prediction(
            why="the runs place the dice by different policies, and the additive face model does not "
            "see where a face lies"
        )
    else:
        prediction = predict_gain(boards_a, sa, rows, cols_, base, variant)
    return WhatIfResult(
        base,
        variant,
        list(swaps),
        changed_dice(base, variant),
        loc.ref("base"),
        loc.ref("variant"),
        count,
        float(sa.mean()),
        float(sb.mean()),
        gain,
        low,
        high,
        sd,
        float((d > 0).mean()),
        float((d < 0).mean()),
        float((d == 0).mean()),
        differ,
        prediction,
        summaries,
        *placements,
    )


def _placements(
    base_text: str | None, base: DiceSet, variant_text: str | None, variant: DiceSet
) -> tuple[str | None, str | None]:
    """Each run's placement policy in its canonical spelling (None: none); a ConfigError
    (exit 2) for one its dice cannot follow, before anything is written."""
    from pipeline.boards import check_placement, parse_placement
    from pipeline.errors import BoggleError

    out: list[str | None] = []
    for option, text, dice in (("--base-placement", base_text, base), ("--placement", variant_text, variant)):
        if text is None:
            out.append(None)
            continue
        try:
            policy = parse_placement(text)
            check_placement(policy, dice)
        except BoggleError as exc:
            raise ConfigError(f"{option}: {exc.message}") from None
        out.append(policy.text)
    return out[0], out[1]


def _base_and_variant(
    base_spec: str, swaps: Sequence[str], dice_b: str | None, shape: str | None
) -> tuple[DiceSet, DiceSet]:
    """The base set and the variant (``dice_b``, or the base, with the swaps applied); a bad
    swap, shape or set, or a ``dice_b`` of other numbers of dice or faces, is a ConfigError."""
    from pipeline.boards import parse_shape

    parsed = [parse_swap(s) for s in swaps]
    wanted = parse_shape(shape) if shape else (None, None)
    base = load_dice_set(base_spec, *wanted)
    start = load_dice_set(dice_b, base.rows, base.cols) if dice_b else base
    if len(start.dice) != len(base.dice) or len(start.dice[0]) != len(base.dice[0]):
        raise ConfigError(
            f"--dice-b {dice_b}: {len(start.dice)} dice of {len(start.dice[0])} faces, the base has "
            f"{len(base.dice)} of {len(base.dice[0])}: a paired what-if needs the same numbers "
            "(the same draws)"
        )
    return base, apply_swaps(start, parsed)


def _run_config(
    boards_cfg: dict[str, Any],
    dice: str,
    run_dir: str,
    *,
    n_jobs: int,
    dictionary: str | None,
    rules: str | None,
) -> Any:
    """The resolved run config of one side of the what-if: ``dice`` rolled as ``boards_cfg``
    says, written to ``run_dir``."""
    from pipeline.config import config_from_dict

    raw: dict[str, Any] = {
        "boards": {**boards_cfg, "dice": dice},
        "run": {"out": str(run_dir), "n_jobs": n_jobs},
    }
    if dictionary:
        raw["lexicon"] = {"path": dictionary}
    if rules:
        raw["rules"] = {"name": rules}
    return config_from_dict(raw).resolve()


def _paired_runs(
    base_dir: str, variant_dir: str, count: int
) -> tuple[tuple[np.ndarray, list[str]], tuple[np.ndarray, list[str]]]:
    """(scores, boards) of each run in board-id order; an InternalError unless both hold the
    board ids 0..count-1."""
    from pipeline.store.dataset import read_run

    cols = ["board_id", "board", "score"]
    a, b = read_run(base_dir, cols), read_run(variant_dir, cols)
    ids_a, ids_b = a.column("board_id").to_numpy(), b.column("board_id").to_numpy()
    if len(ids_a) != count or not np.array_equal(ids_a, ids_b):
        raise InternalError(f"{base_dir} and {variant_dir} do not hold the same board ids 0..{count - 1}")
    order_a, order_b = np.argsort(ids_a, kind="stable"), np.argsort(ids_b, kind="stable")
    sa = a.column("score").to_numpy()[order_a].astype(np.float64)
    sb = b.column("score").to_numpy()[order_b].astype(np.float64)
    all_a, all_b = a.column("board").to_pylist(), b.column("board").to_pylist()
    return (sa, [all_a[i] for i in order_a]), (sb, [all_b[i] for i in order_b])


def _refuse_other_variant(variant_dir: str, sha256: str) -> None:
    """OutputConflictError (exit 4) when ``variant_dir`` holds the run of another variant, before
    its dice file (``OUT/variant-dice.txt``) would be rewritten under it (the runner would
    refuse the run only after). A record that cannot be read is left to the runner."""
    import json

    from pipeline.errors import OutputConflictError
    from pipeline.store import MANIFEST, RUN_RECORD, location

    loc = location(variant_dir)
    for name in (MANIFEST, RUN_RECORD):
        try:
            if not loc.is_file(name):
                continue
            record = json.loads(loc.read_bytes(name).decode("utf-8"))
            held = record["identity"]["dice"]["sha256"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if held != sha256:
            raise OutputConflictError(
                f"{variant_dir} holds the run of another variant (dice sha256 {str(held)[:8]}, this one "
                f"{sha256[:8]}); use --overwrite to replace it, or another --out"
            )
        return
