"""The self-contained HTML report: tables, plots (embedded as PNG data URIs) and provenance.

The page needs no server and no network: styles are inline, every plot is embedded as a
``data:image/png;base64`` URI (and also linked to its PNG file beside the report), so the file
can be opened from disk, mailed or archived on its own.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.analyze._html import Cell, column_table, field
from pipeline.analyze._html import esc as _esc
from pipeline.analyze._html import mono as _mono
from pipeline.analyze._html import num as _num
from pipeline.analyze._html import pct as _pct
from pipeline.analyze._html import table as _table
from pipeline.analyze._html import whole as _whole
from pipeline.analyze._plots import Plot
from pipeline.analyze._runs import RunInfo
from pipeline.analyze._stats import FEW_WORDS, Tables, series_labels
from pipeline.io import write_text_atomic

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1d1d1f; background: #fafafa; line-height: 1.45; }
main { max-width: 1216px; margin: 0 auto; padding: 12px 24px 64px; }
h1 { font-size: 1.6em; margin: 0.2em 0; }
h2 { margin-top: 2em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; }
p.lead { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.86em; background: #fff; }
th, td { border: 1px solid #d6d6d6; padding: 3px 7px; text-align: right; vertical-align: top; }
th { font-weight: 600; }
.ci { white-space: nowrap; }
section#headline { background: #fff; border: 1px solid #d6d6d6; border-left: 4px solid #3b6ea8;
                   padding: 2px 14px; margin: 6px 0 10px; }
section#headline table { font-size: 0.95em; margin: 8px 0 4px; }
section#headline b.big { font-size: 1.2em; }
p.small { font-size: 0.85em; color: #444; margin: 4px 0 8px; }
p.warn { border-left: 4px solid #c0392b; padding: 4px 8px; background: #fdf2f0; }
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
ul.verdicts { background: #fff; border-left: 4px solid #3b6ea8; padding: 8px 8px 8px 28px; }
p.note { color: #8a5a00; }
tr.obscure td { color: #888; }
tr.flagged td { background: #fdecea; }
section#runs table td { text-align: left; }
td { white-space: nowrap; }
td.l { white-space: normal; }
div.dt-container { overflow-x: auto; }
"""


EVERYDAY = "how often it is used in everyday text, wordfreq"


def _with_series(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["series"] = series_labels(out) if len(out) else pd.Series(dtype=object)
    return out


# ---------------------------------------------------------------- sections


def _distribution_rows(col: str, what: str) -> list[tuple[str, str, Callable[[Any], str]]]:
    """The summary's rows of one distribution (score, words): mean, median, spread, tail, max."""
    stats = [
        ("mean", "mean"),
        ("median", "median"),
        ("std", "standard deviation"),
        ("p10", "10th percentile"),
        ("p90", "90th percentile"),
        ("p99", "99th percentile"),
    ]
    rows: list[tuple[str, str, Callable[[Any], str]]] = [
        (f"{col}_{stat}", f"{what}: {label}", _num) for stat, label in stats
    ]
    return [*rows, (f"{col}_max", f"{what}: max", _whole)]


SUMMARY_ROWS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("boards", "boards", _whole),
    *_distribution_rows("score", "score"),
    *_distribution_rows("words", "words"),
    *[(f"share_lt{k}_words", f"boards with < {k} words", _pct) for k in FEW_WORDS],
    ("dead_cells_mean", "dead cells: mean", _num),
    ("share_dead_ge1", "boards with ≥ 1 dead cell", _pct),
    ("longest_len_mean", "longest word: mean letters", _num),
    ("longest_len_max", "longest word: max letters", _whole),
]


def summary_section(summary: pd.DataFrame) -> str:
    """Runs as columns, metrics as rows (easier to compare than a wide table)."""
    s = _with_series(summary)
    header = ["", *s["series"].tolist()]
    rows = []
    for col, label, fmt in SUMMARY_ROWS:
        rows.append([_esc(label), *(fmt(v) for v in s[col].tolist())])
    return _table(header, rows, left=1)


BY_LENGTH_COLUMNS: dict[str, Cell] = {
    "run": field(_esc, "series"),
    "length": field(_esc, "length"),
    "words / board": field(_num, "words_per_board"),
    "points / board": field(_num, "points_per_board"),
    "share of words": field(_pct, "share_of_words"),
    "share of points": field(_pct, "share_of_points"),
    "words (total)": field(_whole, "words_total"),
    "points (total)": field(_whole, "points_total"),
}


def by_length_section(by_length: pd.DataFrame) -> str:
    return column_table(BY_LENGTH_COLUMNS, _with_series(by_length).to_dict("records"), left=2)


LONGEST_COLUMNS: dict[str, Cell] = {
    "run": field(_esc, "series"),
    "longest word (letters)": field(_whole, "length"),
    "boards": field(_whole, "boards"),
    "share": field(_pct, "share"),
    "example": lambda r: _mono(r["example"] or ""),
}


def longest_section(longest: pd.DataFrame) -> str:
    return column_table(LONGEST_COLUMNS, _with_series(longest).to_dict("records"), left=1, text_cols=[4])


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
            [
                _esc(r["series"]),
                _num(r["rank"], 0),
                _mono(r["board"]),
                f"{int(r['rows'])}x{int(r['cols'])}",
                _num(r["score"], 0),
                _num(n, 0),
                _mono(r["longest_word"] or ""),
                _num(r["dead_cells"], 0),
                cell,
            ]
        )
    header = ["run", "rank", "board", "shape", "score", "words", "longest", "dead cells", "word list"]
    return _table(header, rows, 3, [6, 8])


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
    return [[_esc(k), _mono(_short(v))] for k, v in items]


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


Section = tuple[str, str, str]  # (id, heading, HTML)
FigureFn = Callable[[str], str]  # a plot's name -> its embedded figure ("" when not drawn)


def render_report(
    runs: Sequence[RunInfo],
    tables: Tables,
    plots: Sequence[Plot],
    plot_dir: Path,
    rel_dir: str,
    *,
    top_words: int = 50,
) -> str:
    """The report page as a string (plots read from ``plot_dir`` and embedded)."""
    import pipeline.analyze._interactive as interactive
    from pipeline.analyze._first_screen import headline_section
    from pipeline.analyze._provenance import run_title
    from pipeline.analyze.sections import runs_header, verdicts

    by_name = {p.name: p for p in plots}

    def fig(name: str) -> str:
        return _plot_html(by_name[name], plot_dir, rel_dir) if name in by_name else ""

    title = _esc(run_title(runs))
    total = int(tables.summary[tables.summary["source"] != "(all)"]["boards"].sum())
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    counts = tables.score_counts
    counts = counts[counts["source"] != "(all)"] if len(counts) else counts
    zoomable = interactive.score_cdf_figure(counts, series_labels(counts).tolist()) if len(counts) else ""
    boards = "".join(_plot_html(p, plot_dir, rel_dir) for p in plots if p.name.startswith("best_board_"))
    sections = [
        *_comparison_sections(tables, fig),
        *_board_sections(tables, fig, zoomable),
        *_serving_sections(tables),
        ("top", "Top boards", f'<div class="boards">{boards}</div>' + top_boards_section(tables.top_boards)),
        ("words", "Most frequent words", _words_section(tables, top_words)),
        ("method", "Method and sources", method_section()),
        ("provenance", "Provenance", provenance_section(runs)),
    ]
    without = [r.label for r in runs if not r.has_words]
    if len(without) == len(runs):
        sections = [sec for sec in sections if sec[0] != "words"]
    nav = "".join(f'<a href="#{sid}">{_esc(t)}</a>' for sid, t, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_esc(t)}</h2>{c}</section>' for sid, t, c in sections)
    findings = verdicts(tables.comparisons, tables.paired)
    head = headline_section(tables.headline, tables.suspects, tables.model_check)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Board quality: {title}</title><style>{CSS}</style>{interactive.head()}"
        f"{interactive.plotly_script() if zoomable else ''}</head><body><main>"
        f"<h1>Board quality: {title}</h1>"
        f'<p class="lead">{total:,} boards analysed, report written {created}.</p>'
        + (f'<section id="headline">{head}</section>' if head else "")
        + f"{findings}{no_words_note(without)}"
        f'<section id="runs">{runs_header(runs)}</section>'
        f"<nav>{nav}</nav>{body}</main>{interactive.scripts()}</body></html>\n"
    )


def _comparison_sections(tables: Tables, fig: FigureFn) -> list[Section]:
    """The sections first read when runs are compared: runs over time, the comparisons, paired
    runs (each only when it applies)."""
    from pipeline.analyze.sections import comparisons_section, paired_section, trend_section

    out: list[Section] = []
    if len(tables.trend):
        definition = str(tables.bad_share["definition"].iloc[0]) if len(tables.bad_share) else ""
        out.append(("trend", "Runs over time", trend_section(tables.trend, definition, fig("trend"))))
    if len(tables.comparisons):
        out.append(("compare", "How the runs compare", comparisons_section(tables.comparisons)))
    if len(tables.paired):
        html = paired_section(
            tables.paired, tables.paired_boards, tables.paired_words, fig("paired_difference")
        )
        out.append(("paired", "Same boards, board by board", html))
    return out


FACES_INTRO = (
    "<p><b>Raw</b>: mean score of the boards that show a face minus those that do not. "
    "<b>Adjusted</b>: the points a board gains when one cell shows the face instead of an "
    "average face, the other faces unchanged (so a face is not credited for the good faces "
    "that come with it); a model estimate (see the method section). Both with 95% intervals "
    "(±); faces in one order for every run (strongest adjusted effect first), all on one "
    "page. A face on every board has no raw comparison group.</p>"
)


def _board_sections(tables: Tables, fig: FigureFn, zoomable: str) -> list[Section]:
    """The sections on the boards themselves: summary, distributions, lengths, longest words,
    face effects, and dice and cell positions (when rebuilt)."""
    from pipeline.analyze.sections import (
        dice_changes_section,
        dice_section,
        face_comparisons_section,
        face_effects_section,
    )

    out: list[Section] = [
        ("summary", "Summary", summary_section(tables.summary)),
        (
            "distributions",
            "Score and word-count distributions",
            zoomable + fig("score_cdf") + fig("score_distribution") + fig("words_distribution"),
        ),
        (
            "length",
            "Words and points by word length",
            fig("points_by_length") + by_length_section(tables.by_length),
        ),
        (
            "longest",
            "Longest word",
            "<p>Examples: the most common word in everyday text (wordfreq) among each length's most "
            "frequent longest words.</p>" + fig("longest_word") + longest_section(tables.longest_words),
        ),
        (
            "faces",
            "Face effects",
            FACES_INTRO
            + fig("face_effects")
            + face_effects_section(tables.face_effects)
            + face_comparisons_section(tables.face_comparisons),
        ),
    ]
    if len(tables.dice) or len(tables.face_positions):
        dice = dice_section(
            tables.dice, tables.face_positions, fig("dice_values"), tables.notes, tables.dice_faces
        )
        dice += dice_changes_section(tables.dice_changes, tables.model_check)
        out.append(("dice", "Dice and cell positions", dice))
    return out


def _serving_sections(tables: Tables) -> list[Section]:
    """Bad boards and the boards to serve (each when computed)."""
    from pipeline.analyze.sections import bad_boards_section, serve_section

    out: list[Section] = []
    if len(tables.bad_share):
        out.append(("bad", "Bad boards", bad_boards_section(tables.bad_share, tables.bad_drivers)))
    if len(tables.serve_bands):
        out.append(("serve", "Boards to serve", serve_section(tables.serve_bands)))
    return out


def _words_section(tables: Tables, top_words: int) -> str:
    from pipeline.analyze.sections import frequent_words_section

    return frequent_words_section(tables.frequent_words, EVERYDAY, top_words)


def method_section() -> str:
    """How every figure of the report is computed, and its sources."""
    import pipeline.analyze._interactive as interactive
    from pipeline.analyze._inference import METHOD
    from pipeline.analyze._words import source_note

    return (
        "<ul>"
        f"<li>Confidence intervals: 95%, {_esc(METHOD)}.</li>"
        "<li>Runs that hold the same boards (board by board, checked) are compared with paired "
        "intervals: those of the per-board differences (a face effect's from the same models fitted "
        "to the per-board differences). A pure scaling is a second run's score equal to a fixed "
        "multiple of the first's on every board; the scaling's share of the change is one minus "
        "the squared residual of that fit over the squared per-board change.</li>"
        "<li>Runs over time (nights of a schedule: runs that carry a date): each night's mean "
        "score with its normal interval and its share of bad boards with its Wilson interval. "
        "The design is the run's identity without seed and date; the design most nights share "
        "is the reference, and a night of another design (another word list, other dice) is "
        "flagged and left out of the pooled values. Control limits: a Shewhart chart with the "
        "within-night variance known from the boards, the pooled mean of the reference nights' "
        "boards ± 3 standard errors of a night (3 s / √n, s the pooled within-night standard "
        "deviation, n the night's boards); for the bad share a p-chart, p ± 3 √(p(1−p)/n) with p "
        "the pooled share. A night outside them varies more than its own sampling noise allows "
        "(about 3 nights in 1,000 by chance).</li>"
        "<li>Adjusted face effects and die values: least squares of each board's score on how many "
        "of its cells show each face (an additive model: no interaction between neighbouring "
        "faces), with heteroskedasticity-robust (HC1) intervals; R² is the share of the score's "
        "variance the model explains.</li>"
        "<li>Shares of bad boards and of the Tanglet bands: Wilson score intervals; risk ratios: the "
        "log (Katz) interval. A share is written &lt;0.1% or &gt;99.9% when it rounds to 0% or "
        "100% without being exactly that.</li>"
        "<li>How common a word is: wordfreq's Zipf scale (log10 of its uses per billion words, 0 to "
        "about 8).</li>"
        f"<li>{_esc(source_note())}; the language follows the lexicon (tanglet:&lt;lang&gt;, "
        "else English).</li>"
        f"<li>{_esc(interactive.source_note())}; the PNG files beside the report are the "
        "same plots, for printing and the notebook.</li></ul>"
    )


def write_report(
    runs: Sequence[RunInfo],
    tables: Tables,
    plots: Sequence[Plot],
    out_dir: Path,
    plot_subdir: str,
    *,
    top_words: int = 50,
) -> Path:
    """Write ``report.html`` into ``out_dir`` (atomically) and return its path."""
    out_dir = Path(out_dir)
    page = render_report(runs, tables, plots, out_dir / plot_subdir, plot_subdir, top_words=top_words)
    path = out_dir / "report.html"
    write_text_atomic(path, page)
    return path
