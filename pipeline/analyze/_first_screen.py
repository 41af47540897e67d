"""The report's first screen: what a designer decides on, per run (points a board, the bad-board
share, the boards to serve as shares of the run), each later run's change against the first in
points with its interval (paired where the runs hold the same boards or share their draws),
the dice to look at next with the ``boggle what-if`` line that measures each, and a warning
where the model behind die values and a measured change disagree."""

from __future__ import annotations

import math

import pandas as pd

from pipeline.analyze._html import Cell, Record, column_table, esc, field, mono, num, pct
from pipeline.analyze.sections import model_fit_text, what_if_note

POOL_NAMES = ("easy", "medium", "hard")


def _signed(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def _change(r: Record, name: str, *, points: bool, digits: int = 1) -> str:
    """A later run's change against the first: ``+12.0 (11.5 to 12.5)``, in points of the
    share where ``points`` (a share's change), on its own line; empty for the first run."""
    est = r.get(f"{name}_change")
    if est is None or pd.isna(est):
        return ""
    scale = 100.0 if points else 1.0
    lo, hi = float(r[f"{name}_change_low"]) * scale, float(r[f"{name}_change_high"]) * scale
    unit = " points" if points else ""
    return (
        f'<br><span class="ci">{_signed(float(est) * scale, digits)}{unit} '
        f"({_signed(lo, digits)} to {_signed(hi, digits)})</span>"
    )


def _mean(r: Record) -> str:
    half = (float(r["score_high"]) - float(r["score_low"])) / 2
    return f'<b class="big">{num(r["score_mean"], 1)}</b> <span class="ci">± {half:.1f}</span>' + _change(
        r, "score", points=False, digits=2
    )


def _bad(r: Record) -> str:
    if pd.isna(r["bad_share"]):
        return ""
    iv = f"{float(r['bad_share_low']) * 100:.2f}%–{float(r['bad_share_high']) * 100:.2f}%"
    return f'<b>{pct(r["bad_share"])}</b> <span class="ci">({iv})</span>' + _change(
        r, "bad", points=True, digits=2
    )


def _pools(r: Record) -> str:
    parts = []
    for name in POOL_NAMES:
        share = r.get(f"pool_{name}_share")
        if share is None or pd.isna(share):
            parts.append("–")
            continue
        text = f"{name} <b>{pct(share)}</b>"
        est = r.get(f"pool_{name}_change")
        if est is not None and not pd.isna(est):
            lo, hi = float(r[f"pool_{name}_change_low"]) * 100, float(r[f"pool_{name}_change_high"]) * 100
            change = f"{_signed(float(est) * 100, 2)} ({_signed(lo, 2)} to {_signed(hi, 2)})"
            text += f' <span class="ci">{change}</span>'
        parts.append(text)
    return "<br>".join(parts)


def _pairing(r: Record) -> str:
    return {"boards": "paired: the same boards", "draws": "paired: the same draws"}.get(
        str(r.get("pairing")), ""
    )


def headline_section(head: pd.DataFrame, suspects: pd.DataFrame, check: pd.DataFrame) -> str:
    """The first screen (see the module's description)."""
    if head.empty:
        return ""
    has_pool = head[["pool_easy_share", "pool_medium_share", "pool_hard_share"]].notna().any().any()
    several = len(head) > 1
    columns: dict[str, Cell] = {
        "run": lambda r: (
            esc(r["run"]) + (f'<br><span class="small">{_pairing(r)}</span>' if _pairing(r) else "")
        ),
        "points a board": _mean,
        "words a board": field(num, "words_mean", digits=1),
    }
    if head["bad_share"].notna().any():
        columns[f"bad boards ({head['bad_definition'].dropna().iloc[0]})"] = _bad
    if has_pool:
        columns["boards to serve (Tanglet bands, share of the run)"] = _pools
    notes = "Points a board with its 95% interval (±); shares with their 95% interval. "
    if several:
        notes += (
            "Below each later run: its change against the first run, with its 95% interval; a change of "
            "a share in percentage points. Paired runs (the same boards, or the same draws of the dice: "
            "a what-if's arms) are compared board by board, which is much tighter than two independent "
            "intervals. "
        )
    if has_pool:
        notes += "Boards to serve: the share of each run in Tanglet's easy, medium and hard bands. "
    out = (
        column_table(columns, head.to_dict("records"), left=1, table_id="headline-table")
        + f'<p class="small">{notes}</p>'
    )
    for rec in check.to_dict("records") if len(check) else []:
        if not rec["agree"]:
            out += f'<p class="warn"><b>Model warning.</b> {esc(rec["note"])}</p>'
    return out + dice_next(head, suspects)


def dice_next(head: pd.DataFrame, suspects: pd.DataFrame) -> str:
    """The dice to look at next: per run, on one line, its lowest-valued die and the die face
    that comes most with bad boards (the first screen must stay one screen), one ``boggle
    what-if`` line as the example, and every suspect with its own what-if line folded below."""
    if suspects.empty:
        return ""
    items, short = [], []
    example = ""
    for run, g in suspects.groupby("run", sort=False):
        lines: list[str] = []
        firsts: dict[str, str] = {}
        for rec in g.to_dict("records"):
            if rec["by"] == "value":
                what = (
                    f"value {_signed(float(rec['estimate']), 2)} points ({_signed(float(rec['low']), 2)} to "
                    f"{_signed(float(rec['high']), 2)})"
                )
            else:
                what = (
                    f"{esc(rec['what'])}: {float(rec['estimate']):.2f} ({float(rec['low']):.2f} to "
                    f"{float(rec['high']):.2f})"
                )
            line = f"die {int(rec['die'])} {mono(rec['faces'])}: {what}"
            firsts.setdefault(rec["by"], line)
            example = example or str(rec["what_if"] or "")
            cmd = f"<br><code>{esc(rec['what_if'])}</code>" if rec["what_if"] else ""
            lines.append(f"<li>{line}{cmd}</li>")
        items.append(f"<p><b>{esc(run)}</b></p><ul>{''.join(lines)}</ul>")
        short.append(f"<li><b>{esc(run)}</b>: {' · '.join(firsts.values())}</li>")
    r2 = head["model_r2"].dropna() if "model_r2" in head else pd.Series(dtype=float)
    note = what_if_note(float(r2.iloc[0]) if len(r2) == 1 or (len(r2) and r2.nunique() == 1) else math.nan)
    if len(r2) > 1 and r2.nunique() > 1:
        note += model_fit_text(
            (run, v) for run, v in zip(head["run"], head["model_r2"], strict=True) if v == v
        )
    measure = f" Measure a change: <code>{esc(example)}</code>" if example else ""
    return (
        "<p><b>Dice to look at next</b>: each run's lowest-valued die and the die face that comes most "
        f"with bad boards.{measure}</p><ul>{''.join(short)}</ul>"
        "<details><summary>Every suspect, each with the what-if that measures a change</summary>"
        + "".join(items)
        + f'</details><p class="small">{note}</p>'
    )
