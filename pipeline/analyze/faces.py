"""The faces boards show and each face's raw effect on the score, computed by DuckDB.

The faces are read from the compact board text; a face's raw effect is the mean score of the
boards showing it against those that do not, with its 95% interval; one face order is shared by
every run.

Single-character boards are tested face by face with substring filters in one pass; boards with
multi-letter faces (``[th]``) are split token by token. The adjusted effects (a face against an
average face, the others held fixed) are :mod:`pipeline.analyze.cells`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from pipeline.analyze.runs import query, sql_str

if TYPE_CHECKING:
    import duckdb

# Boards sampled for the candidate single-character faces (a check pass finds the rest).
FACE_SAMPLE = 10_000
# One compact-notation token: a bracketed multi-letter face or a single character.
_FACE_TOKEN = r"\[[^\]]*\]|."


def faces_sql(board_col: str = "board") -> str:
    """SQL for the distinct non-blank faces of a compact board (``q`` = Qu, ``[th]`` = th)."""
    tokens = f"regexp_extract_all({board_col}, '{_FACE_TOKEN}')"
    face = (
        "lambda t: CASE WHEN t IN ('q', 'Q') THEN 'qu' WHEN t[1] = '[' THEN lower(t[2:-2]) ELSE lower(t) END"
    )
    return f"list_distinct(list_filter(list_transform({tokens}, {face}), lambda f: f <> '.'))"


def board_faces(con: duckdb.DuckDBPyConnection, boards: Sequence[str]) -> list[list[str]]:
    """The face sets the SQL parser reads from compact boards (sorted; for checks and notebooks)."""
    sql = f"SELECT list_sort({faces_sql('b')}) FROM unnest(?) AS t(b)"
    return [list(r[0]) for r in con.execute(sql, [list(boards)]).fetchall()]


def _char_class(chars: set[str]) -> str:
    return "[^" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(chars)) + "]"


def single_chars(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every character of the boards written without brackets (where one character is a face).

    Candidates come from a sample; each check pass finds boards with a character outside them,
    so the loop ends with the exact set after one or two cheap scans of the board column.
    """
    rows = con.execute(
        f"SELECT board FROM boards WHERE NOT contains(board, '[') LIMIT {int(FACE_SAMPLE)}"
    ).fetchall()
    chars = {ch for (b,) in rows for ch in b}
    while True:
        pattern = sql_str(_char_class(chars)) if chars else "'.'"
        extra = con.execute(
            f"SELECT board FROM boards WHERE NOT contains(board, '[') "
            f"AND regexp_matches(board, {pattern}) LIMIT 10000"
        ).fetchall()
        new = {ch for (b,) in extra for ch in b} - chars
        if not new:
            return chars
        chars |= new


def _single_face(ch: str) -> str:
    return "qu" if ch in ("q", "Q") else ch.lower()


def _face_counts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """(run, source, face, boards_with, s_with): boards showing each face and their score sum."""
    chars = single_chars(con) - {".", "["}
    by_face: dict[str, list[str]] = {}
    for ch in sorted(chars):
        by_face.setdefault(_single_face(ch), []).append(ch)
    frames = []
    if by_face:
        # One pass with a filtered aggregate per face: a substring test per board and face is
        # several times faster than splitting every board into a list and unnesting it.
        faces = sorted(by_face)
        aggs = []
        for i, face in enumerate(faces):
            cond = " OR ".join(f"contains(board, {sql_str(ch)})" for ch in by_face[face])
            aggs.append(
                f"count(*) FILTER (WHERE NOT br AND ({cond})) AS n_{i}, "
                f"coalesce(sum(score) FILTER (WHERE NOT br AND ({cond})), 0)::DOUBLE AS s_{i}, "
                f"coalesce(sum(score * score) FILTER (WHERE NOT br AND ({cond})), 0)::DOUBLE AS q_{i}"
            )
        wide = query(
            con,
            f"SELECT run, source, {', '.join(aggs)} FROM "
            "(SELECT run, source, score, board, contains(board, '[') AS br FROM boards) "
            "GROUP BY run, source",
        )
        for i, face in enumerate(faces):
            part = wide[["run", "source", f"n_{i}", f"s_{i}", f"q_{i}"]].copy()
            part.columns = pd.Index(["run", "source", "boards_with", "s_with", "q_with"])
            part["face"] = face
            frames.append(part)
    # Boards with multi-letter faces ([th]) are parsed token by token.
    frames.append(
        query(
            con,
            f"""WITH f AS (SELECT run, source, score, unnest({faces_sql()}) AS face
                           FROM boards WHERE contains(board, '['))
                SELECT run, source, face, count(*) AS boards_with, sum(score)::DOUBLE AS s_with,
                       sum(score * score)::DOUBLE AS q_with
                FROM f GROUP BY ALL""",
        )
    )
    counts = pd.concat(frames, ignore_index=True)
    counts = counts.groupby(["run", "source", "face"], as_index=False, sort=False)[
        ["boards_with", "s_with", "q_with"]
    ].sum()
    return counts[counts["boards_with"] > 0]


def face_effects(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """For each face: share of boards showing it and mean score with it vs without it.

    ``effect`` = mean score with the face minus mean score without it, with its 95% interval
    (``effect_low``, ``effect_high``: Welch, normal approximation); a face every board shows has
    no "without" group (NaN). Faces are read from the compact board text. Rows are sorted by
    effect within each run; :func:`face_order` gives one order for all runs.
    """
    from pipeline.analyze.inference import diff_of_means, var_from_sums

    counts = _face_counts(con)
    totals = query(
        con,
        "SELECT run, source, count(*) AS n, sum(score)::DOUBLE AS s, sum(score * score)::DOUBLE AS q "
        "FROM boards GROUP BY ALL",
    )
    df = counts.merge(totals, on=["run", "source"], how="inner")
    n, s = df["n"].astype(float), df["s"]
    with_n = df["boards_with"].astype(float)
    without_n = n - with_n
    out = pd.DataFrame(
        {
            "run": df["run"],
            "source": df["source"],
            "face": df["face"],
            "boards_with": df["boards_with"].astype("int64"),
            "boards_without": (df["n"] - df["boards_with"]).astype("int64"),
            "share_with": with_n / n,
            "mean_score_with": df["s_with"] / with_n,
            "mean_score_without": ((s - df["s_with"]) / without_n).where(without_n > 0),
        }
    )
    out["effect"] = out["mean_score_with"] - out["mean_score_without"]
    lows, highs = [], []
    for rec in df.to_dict("records"):
        n_w, n_o = float(rec["boards_with"]), float(rec["n"] - rec["boards_with"])
        s_o, q_o = rec["s"] - rec["s_with"], rec["q"] - rec["q_with"]
        sd_w = math.sqrt(var_from_sums(n_w, rec["s_with"], rec["q_with"]))
        sd_o = math.sqrt(var_from_sums(n_o, s_o, q_o))
        if n_w < 2 or n_o < 2:
            lows.append(math.nan)
            highs.append(math.nan)
            continue
        iv = diff_of_means(s_o / n_o, sd_o, n_o, rec["s_with"] / n_w, sd_w, n_w)
        lows.append(iv.low)
        highs.append(iv.high)
    out["effect_low"] = lows
    out["effect_high"] = highs
    order = dict(con.execute("SELECT run, idx FROM run_order").fetchall())
    out["_run"] = out["run"].map(order)
    out["_neg"] = -out["effect"]
    out = out.sort_values(["_run", "source", "_neg", "face"], na_position="last", kind="stable")
    return out.drop(columns=["_run", "_neg"]).reset_index(drop=True)


def face_order(effects: pd.DataFrame) -> list[str]:
    """One face order for every run and panel: strongest mean adjusted effect across runs
    first (the raw effect where no adjusted one exists), ties alphabetical."""
    if effects.empty:
        return []
    col = "adj_effect" if "adj_effect" in effects and effects["adj_effect"].notna().any() else "effect"
    mean = effects.groupby("face")[col].mean().fillna(-math.inf)
    return sorted(mean.index, key=lambda f: (-mean[f], f))
