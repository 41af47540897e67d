"""What a finished dice design reports: the files of its job folder, the validation of the start
against the proposed set on fresh boards, ``report.json`` and ``moves.csv``.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np

from pipeline.boards import DiceSet, roll_dice_layout
from pipeline.design._config import MAX_BATCH_CELLS, DesignConfig, Objective
from pipeline.design._constraints import dice_changes, printability_warnings
from pipeline.design._eval import VALIDATE_STREAM, Paired, Solver, keyed_rng, paired_batch
from pipeline.design._whatif import Z95, paired_gain
from pipeline.lexicon import CompiledLexicon

FORMAT = "boggle-design"
STATE = "_design.json"
DICE_OUT = "dice.txt"
REPORT = "report.json"
MOVES = "moves.csv"
MOVE_COLUMNS = ["step", "candidate", "move", "estimate", "low", "high", "boards", "boards_solved"]
DEFAULT_BAD_WORDS = 50


def validate(
    cfg: DesignConfig,
    solver: Solver,
    lexicon: CompiledLexicon,
    start: DiceSet,
    proposed: DiceSet,
    objective: Objective,
) -> dict[str, Any]:
    """The start and the proposed set on ``cfg.validate`` fresh boards, paired: the objective,
    the mean score and the bad share for both, each difference with its 95% interval."""
    ta, tb = start.face_table(lexicon.alphabet), proposed.face_table(lexicon.alphabet)
    rng = keyed_rng(cfg.seed, VALIDATE_STREAM)
    parts: list[Paired] = []
    left = cfg.validate
    # 20,000 boards at a time, fewer on big boards (a batch's draws stay within MAX_BATCH_CELLS)
    step = max(1, min(20_000, MAX_BATCH_CELLS // (start.rows * start.cols)))
    while left > 0:
        n = min(left, step)
        order, face = roll_dice_layout(start, rng, n)
        parts.append(paired_batch(solver, ta, tb, order, face))
        left -= n
    sa = np.concatenate([p.score_a for p in parts])
    sb = np.concatenate([p.score_b for p in parts])
    wa = np.concatenate([p.words_a for p in parts])
    wb = np.concatenate([p.words_b for p in parts])
    bad_n = objective.words if objective.kind == "bad" else DEFAULT_BAD_WORDS
    metrics = {
        "objective": objective,
        "mean": Objective("mean", "mean"),
        "bad": Objective(f"bad:{bad_n}", "bad", words=bad_n),
    }
    out: dict[str, Any] = {"boards": len(sa), "boards_differ": sum(p.differ for p in parts) / len(sa)}
    for name, obj in metrics.items():
        va, vb = obj.values(sa, wa), obj.values(sb, wb)
        gain, low, high, _ = paired_gain(va, vb)
        # better: the whole interval on the good side of 0 (above for band and mean, below for bad)
        better = low is not None and high is not None and (low > 0 if obj.sign > 0 else high < 0)
        out[name] = {
            "definition": obj.text,
            "start": float(va.mean()),
            "proposed": float(vb.mean()),
            "difference": gain,
            "low": low,
            "high": high,
            "better": better,
        }
    out["z"] = Z95
    return out


def build_report(
    cfg: DesignConfig,
    state: dict[str, Any],
    start: DiceSet,
    proposed: DiceSet,
    objective: Objective,
    validation: dict[str, Any],
    cpu_s: float,
) -> dict[str, Any]:
    counts = start.face_counts()
    after = proposed.face_counts()
    changes = {f or "_": after.get(f, 0) - counts.get(f, 0) for f in sorted(set(counts) | set(after))}
    return {
        "objective": {"text": objective.text, "definition": objective.describe()},
        "start": {"dice": start.label, "sha256": start.sha256},
        "proposed": {"file": DICE_OUT, "sha256": proposed.sha256, "faces": [list(d) for d in proposed.dice]},
        "face_count_changes": {f: n for f, n in changes.items() if n},
        # per die: which faces changed, the start's die against the proposed one
        "dice_changes": dice_changes(start.dice, proposed.dice),
        # what a publisher would question about the proposed dice (and whether the start had it)
        "warnings": printability_warnings(start.dice, proposed.dice, cfg.max_same),
        "constraints": cfg.constraints.to_dict(),
        # the moves that brought the start within the constraints before the search (untested)
        "repair": list(state.get("repair", [])),
        "moves_accepted": len(state["moves"]),
        "candidates": state["candidates"],
        "boards_solved": state["boards_solved"],
        "budget": cfg.budget,
        "stop": state["stop"],
        "cpu_s": round(cpu_s, 3),
        "validation": validation,
        "moves": state["moves"],
        "settings": cfg.settings(),
    }


def moves_csv(moves: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=MOVE_COLUMNS, lineterminator="\n")
    w.writeheader()
    for m in moves:
        w.writerow({k: m[k] for k in MOVE_COLUMNS})
    return buf.getvalue()
