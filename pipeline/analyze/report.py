"""The self-contained HTML report: tables, plots (embedded as PNG data URIs) and provenance.

The page needs no server and no network: styles are inline, every plot is embedded as a
``data:image/png;base64`` URI (and also linked to its PNG file beside the report), so the file
can be opened from disk, mailed or archived on its own.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.analyze.plots import Plot
from pipeline.analyze.runs import RunInfo
from pipeline.analyze.stats import FEW_WORDS, Tables, series_labels
from pipeline.io import write_text_atomic

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1d1d1f; background: #fafafa; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 1.9em; margin-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; }
p.lead { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.9em; background: #fff; }
th, td { border: 1px solid #d6d6d6; padding: 4px 9px; text-align: right; vertical-align: top; }
th { background: #eef1f5; }
td.l, th.l { text-align: left; }
td.mono, span.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
figure { margin: 1em 0 1.6em; background: #fff; border: 1px solid #e2e2e2; padding: 10px; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 0.9em; margin-top: 6px; }
.boards { display: flex; flex-wrap: wrap; gap: 16px; }
.boards figure { flex: 0 1 360px; }
details { margin: 0.3em 0; }
details pre { background: #f3f3f3; padding: 8px; overflow-x: auto; max-height: 420px;
              font-size: 0.85em; }
td details { max-width: 520px; text-align: left; }
td details div { font-family: ui-monospace, monospace; font-size: 0.85em; word-break: break-word; }
nav a { margin-right: 14px; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and digits == 0):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        return _esc(value)
    if as_float.is_integer() and not isinstance(value, float):
        return f"{int(as_float):,}"
    return f"{as_float:,.{digits}f}"


def _pct(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value) * 100:.1f}%"


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 0, text_cols: Sequence[int] = ()
) -> str:
    """An HTML table from already-escaped cells; the first ``left`` columns and ``text_cols``
    are left-aligned (numbers stay right-aligned)."""

    def cls(i: int) -> str:
        return ' class="l"' if i < left or i in text_cols else ""

    head = "".join(f"<th{cls(i)}>{_esc(h)}</th>" for i, h in enumerate(header))
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table>{thead}<tbody>{body}</tbody></table>"


def _with_series(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["series"] = series_labels(out) if len(out) else pd.Series(dtype=object)
    return out


# ---------------------------------------------------------------- sections


SUMMARY_ROWS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("boards", "boards", lambda v: _num(v, 0)),
    ("score_mean", "score: mean", _num),
    ("score_median", "score: median", _num),
    ("score_std", "score: standard deviation", _num),
    ("score_p10", "score: 10th percentile", _num),
    ("score_p90", "score: 90th percentile", _num),
    ("score_max", "score: max", lambda v: _num(v, 0)),
    ("words_mean", "words: mean", _num),
    ("words_median", "words: median", _num),
    ("words_std", "words: standard deviation", _num),
    ("words_p10", "words: 10th percentile", _num),
    ("words_p90", "words: 90th percentile", _num),
    ("words_max", "words: max", lambda v: _num(v, 0)),
    *[(f"share_lt{k}_words", f"boards with < {k} words", _pct) for k in FEW_WORDS],
    ("dead_cells_mean", "dead cells: mean", _num),
    ("share_dead_ge1", "boards with ≥ 1 dead cell", _pct),
    ("longest_len_mean", "longest word: mean letters", _num),
    ("longest_len_max", "longest word: max letters", lambda v: _num(v, 0)),
]


def summary_section(summary: pd.DataFrame) -> str:
    """Runs as columns, metrics as rows (easier to compare than a wide table)."""
    s = _with_series(summary)
    header = ["", *s["series"].tolist()]
    rows = []
    for col, label, fmt in SUMMARY_ROWS:
        rows.append([_esc(label), *(fmt(v) for v in s[col].tolist())])
    return _table(header, rows, left=1)


def by_length_section(by_length: pd.DataFrame) -> str:
    b = _with_series(by_length)
    rows = [
        [_esc(r["series"]), _esc(r["length"]), _num(r["words_per_board"]),
         _num(r["points_per_board"]), _pct(r["share_of_words"]), _pct(r["share_of_points"]),
         _num(r["words_total"], 0), _num(r["points_total"], 0)]
        for r in b.to_dict("records")
    ]  # fmt: skip
    header = ["run", "length", "words / board", "points / board", "share of words",
              "share of points", "words (total)", "points (total)"]  # fmt: skip
    return _table(header, rows, left=2)


def longest_section(longest: pd.DataFrame) -> str:
    t = _with_series(longest)
    rows = [
        [_esc(r["series"]), _num(r["length"], 0), _num(r["boards"], 0), _pct(r["share"]),
         f'<span class="mono">{_esc(r["example"] or "")}</span>']
        for r in t.to_dict("records")
    ]  # fmt: skip
    return _table(["run", "longest word (letters)", "boards", "share", "example"], rows, 1, [4])


def top_boards_section(top: pd.DataFrame) -> str:
    t = _with_series(top)
    rows = []
    for r in t.to_dict("records"):
        n = int(r["n_words"])
        if pd.isna(r["words"]):  # a run without word lists
            cell = "(not recorded)"
        else:
            cell = f"<details><summary>{n:,} words</summary><div>{_esc(str(r['words']))}</div></details>"
        rows.append(
            [_esc(r["series"]), _num(r["rank"], 0), f'<span class="mono">{_esc(r["board"])}</span>',
             f"{int(r['rows'])}x{int(r['cols'])}", _num(r["score"], 0), _num(n, 0),
             f'<span class="mono">{_esc(r["longest_word"] or "")}</span>',
             _num(r["dead_cells"], 0), cell]
        )  # fmt: skip
    header = ["run", "rank", "board", "shape", "score", "words", "longest", "dead cells", "word list"]
    return _table(header, rows, 3, [6, 8])


def frequent_words_section(freq: pd.DataFrame) -> str:
    """Rank by rank, one column pair per run, so runs read side by side."""
    f = _with_series(freq)
    series = list(dict.fromkeys(f["series"]))
    ranks = sorted(int(x) for x in f["rank"].unique()) if len(f) else []
    by = {(s, int(r)): rec for rec in f.to_dict("records") for s, r in [(rec["series"], rec["rank"])]}
    rows = []
    for rank in ranks:
        row = [_num(rank, 0)]
        for s in series:
            rec = by.get((s, rank))
            row += ["", ""] if rec is None else [
                f'<span class="mono">{_esc(rec["word"])}</span>', _pct(rec["share"])
            ]  # fmt: skip
        rows.append(row)
    header = ["rank"]
    for s in series:
        header += [f"{s}: word", "boards with it"]
    return _table(header, rows, 1, list(range(1, len(header), 2)))


def face_effects_section(effects: pd.DataFrame) -> str:
    e = _with_series(effects)
    series = list(dict.fromkeys(e["series"]))
    faces = list(dict.fromkeys(e["face"]))
    by = {(rec["series"], rec["face"]): rec for rec in e.to_dict("records")}
    rows = []
    for face in faces:
        row = [f'<span class="mono">{_esc(face)}</span>']
        for s in series:
            rec = by.get((s, face))
            row += ["", "", "", ""] if rec is None else [
                _pct(rec["share_with"]), _num(rec["mean_score_with"]),
                _num(rec["mean_score_without"]), _num(rec["effect"]),
            ]  # fmt: skip
        rows.append(row)
    header = ["face"]
    for s in series:
        header += [f"{s}: boards with", "mean score with", "without", "effect"]
    return _table(header, rows, left=1)


def _plot_html(plot: Plot, plot_dir: Path, rel_dir: str) -> str:
    data = base64.b64encode((plot_dir / plot.file).read_bytes()).decode("ascii")
    rel = f"{rel_dir}/{plot.file}"
    return (
        f'<figure id="plot-{_esc(plot.name)}" data-plot="{_esc(plot.file)}">'
        f'<img src="data:image/png;base64,{data}" alt="{_esc(plot.title)}">'
        f"<figcaption>{_esc(plot.caption)} "
        f'(<a href="{_esc(rel)}">{_esc(plot.file)}</a>)</figcaption></figure>'
    )


def _kv_rows(items: Sequence[tuple[str, Any]]) -> list[list[str]]:
    return [[_esc(k), f'<span class="mono">{_esc(_short(v))}</span>'] for k, v in items]


def _short(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return "" if value is None else str(value)


def provenance_section(runs: Sequence[RunInfo]) -> str:
    parts = []
    for run in runs:
        lex = run.lexicon
        report = lex.get("report") if isinstance(lex.get("report"), dict) else {}
        items: list[tuple[str, Any]] = [
            ("directory", str(run.path.resolve())),
            ("part files", len(run.parts)),
            ("lexicon", lex.get("name")),
            ("lexicon source", lex.get("source")),
            ("lexicon content hash (sha256)", lex.get("content_hash")),
            ("lexicon words", lex.get("n_words")),
            ("lexicon drops", report.get("dropped") if report else None),
            ("rules", run.rules or run.config.get("rules")),
            ("boards (config)", run.config.get("boards")),
        ]
        items += [(f"count: {k}", v) for k, v in run.counts.items()]
        for key in ("started_at", "finished_at", "inputs", "rejects_file"):
            if key in run.manifest:
                items.append((key, run.manifest[key]))
        items = [(k, v) for k, v in items if v not in (None, {}, [])]
        full = json.dumps(run.manifest, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        config = json.dumps(run.config, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        versions = run.manifest.get("packages") or run.manifest.get("versions")
        parts.append(
            f"<h3>{_esc(run.label)}</h3>"
            + _table(["", ""], _kv_rows(items), left=2)
            + f"<details open><summary>resolved config</summary><pre>{_esc(config)}</pre></details>"
            + (
                f"<details><summary>package versions</summary><pre>"
                f"{_esc(json.dumps(versions, indent=2, sort_keys=True, default=str))}</pre></details>"
                if versions
                else ""
            )
            + f"<details><summary>full _SUCCESS manifest</summary><pre>{_esc(full)}</pre></details>"
        )
    return "".join(parts)


def no_words_note(labels: Sequence[str]) -> str:
    """The report's one-line note on runs written without word lists (empty when none)."""
    if not labels:
        return ""
    return (
        f'<p class="note">No word lists in {_esc(", ".join(labels))} ([boards] words = false): '
        "top boards are shown without word lists and most frequent words leave it out.</p>"
    )


def render_report(
    runs: Sequence[RunInfo], tables: Tables, plots: Sequence[Plot], plot_dir: Path, rel_dir: str
) -> str:
    """The report page as a string (plots read from ``plot_dir`` and embedded)."""
    by_name = {p.name: p for p in plots}
    boards = [p for p in plots if p.name.startswith("best_board_")]

    def fig(name: str) -> str:
        return _plot_html(by_name[name], plot_dir, rel_dir) if name in by_name else ""

    names = ", ".join(_esc(r.label) for r in runs)
    total = int(tables.summary[tables.summary["source"] != "(all)"]["boards"].sum())
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        ("summary", "Summary", summary_section(tables.summary)),
        ("distributions", "Score and word-count distributions",
         fig("score_distribution") + fig("words_distribution")),
        ("length", "Words and points by word length",
         fig("points_by_length") + by_length_section(tables.by_length)),
        ("longest", "Longest word", fig("longest_word") + longest_section(tables.longest_words)),
        ("faces", "Face effects",
         "<p>Mean score of the boards that show a face against those that do not. A face on "
         "every board has no comparison group.</p>"
         + fig("face_effects") + face_effects_section(tables.face_effects)),
        ("top", "Top boards",
         '<div class="boards">' + "".join(_plot_html(p, plot_dir, rel_dir) for p in boards)
         + "</div>" + top_boards_section(tables.top_boards)),
        ("words", "Most frequent words",
         "<p>Share of boards on which each word can be found.</p>"
         + frequent_words_section(tables.frequent_words)),
        ("provenance", "Provenance", provenance_section(runs)),
    ]  # fmt: skip
    without = [r.label for r in runs if not r.has_words]
    if len(without) == len(runs):
        sections = [sec for sec in sections if sec[0] != "words"]
    nav = "".join(f'<a href="#{sid}">{_esc(title)}</a>' for sid, title, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_esc(t)}</h2>{c}</section>' for sid, t, c in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Board quality: {names}</title><style>{CSS}</style></head><body><main>"
        f"<h1>Board quality: {names}</h1>"
        f'<p class="lead">{total:,} boards analysed, report written {created}.</p>'
        f"{no_words_note(without)}"
        f"<nav>{nav}</nav>{body}</main></body></html>\n"
    )


def write_report(
    runs: Sequence[RunInfo], tables: Tables, plots: Sequence[Plot], out_dir: Path, plot_subdir: str
) -> Path:
    """Write ``report.html`` into ``out_dir`` (atomically) and return its path."""
    out_dir = Path(out_dir)
    page = render_report(runs, tables, plots, out_dir / plot_subdir, plot_subdir)
    path = out_dir / "report.html"
    write_text_atomic(path, page)
    return path
