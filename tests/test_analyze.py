"""Board-quality analysis: exact numbers on runs of known content, comparisons, the report.

The hand-made runs are written with the store's own schema and writers, so they are laid out
exactly like a run of ``boggle run``; the derived columns are computed here from the words.
"""

from __future__ import annotations

import base64
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import pipeline.analyze._stats as stats
from pipeline.analyze import analyze_runs, default_out_dir, load_run, load_runs
from pipeline.boards import Board, format_compact, parse_compact
from pipeline.cli import app
from pipeline.errors import BoggleError, DamagedRunError
from pipeline.stats import StatsSpec
from pipeline.store._parts import PartInfo, write_part
from pipeline.store._schema import parquet_metadata
from tests.conftest import ALPHA, BETA, gathered, make_rows, write_manifest, write_run


def reseal(run_dir: Path, edit: Any) -> None:
    """Change a finished run's manifest with ``edit(manifest)`` and seal it again."""
    from pipeline.store._manifest import seal_of

    manifest = json.loads((run_dir / "_SUCCESS").read_text())
    edit(manifest)
    manifest["seal"] = seal_of(manifest)
    (run_dir / "_SUCCESS").write_text(json.dumps(manifest))


@pytest.fixture
def alpha(tmp_path: Path) -> Path:
    return write_run(tmp_path / "alpha", ALPHA)


@pytest.fixture
def beta(tmp_path: Path) -> Path:
    return write_run(tmp_path / "beta", BETA, chunk_size=2)


def one(df: pd.DataFrame, **where: Any) -> dict[str, Any]:
    mask = np.ones(len(df), dtype=bool)
    for k, v in where.items():
        mask &= (df[k] == v).to_numpy()
    rows = df[mask].to_dict("records")
    assert len(rows) == 1, f"expected one row for {where}, found {len(rows)}"
    return rows[0]


# ---------------------------------------------------------------- exact numbers


def test_summary_numbers_of_a_known_run(alpha: Path) -> None:
    g = gathered([alpha])
    s = stats.summary(g)
    assert len(s) == 1  # one source: no "(all)" row
    r = one(s, run="alpha", source="new")
    assert r["boards"] == 5
    assert r["score_mean"] == pytest.approx(4.0)
    assert r["score_median"] == pytest.approx(3.0)
    assert r["score_std"] == pytest.approx(math.sqrt(12.5))  # sample std of 1, 2, 3, 4, 10
    assert r["score_p10"] == pytest.approx(1.4)
    assert r["score_p90"] == pytest.approx(7.6)
    assert (r["score_min"], r["score_max"]) == (1, 10)
    assert r["words_mean"] == pytest.approx(3.8)
    assert r["words_median"] == pytest.approx(3.0)
    assert r["words_std"] == pytest.approx(math.sqrt(12.7))
    assert r["words_p10"] == pytest.approx(1.4)
    assert r["words_p90"] == pytest.approx(7.2)
    assert r["words_max"] == 10
    assert r["share_lt10_words"] == pytest.approx(0.8)
    assert r["share_lt25_words"] == pytest.approx(1.0)
    assert r["share_lt50_words"] == pytest.approx(1.0)
    assert r["dead_cells_mean"] == pytest.approx(0.6)
    assert r["share_dead_ge1"] == pytest.approx(0.6)
    assert r["longest_len_max"] == 5


def test_summary_agrees_with_numpy(alpha: Path) -> None:
    """The SQL quantile and std conventions are numpy's default (linear, ddof=1)."""
    scores = np.array([1, 2, 3, 4, 10])
    g = gathered([alpha])
    r = stats.summary(g).iloc[0]
    assert r["score_p10"] == pytest.approx(np.percentile(scores, 10))
    assert r["score_p90"] == pytest.approx(np.percentile(scores, 90))
    assert r["score_std"] == pytest.approx(np.std(scores, ddof=1))


@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.integers(0, 3000), min_size=2, max_size=300),
    st.integers(1, 7),
    st.randoms(use_true_random=False),
)
def test_summary_std_is_exact_whatever_the_parts_and_their_order(
    scores: list[int], parts: int, rnd: Any
) -> None:
    """The same boards split into other parts, merged in another order (a run read from S3
    instead of disk, or resumed) give the same bits: the sample std comes from exact integer
    sums, rounded once, not from a running update."""
    import pyarrow as pa

    from pipeline.stats import StatsSpec, merge, part_stats

    def part(chunk: int, xs: list[int]) -> Any:
        n = len(xs)
        cols: dict[str, Any] = {
            "board_id": np.arange(n, dtype=np.int64),
            "board": ["abcd"] * n,
            "rows": np.full(n, 2, np.int16),
            "cols": np.full(n, 2, np.int16),
            "source": ["s"] * n,
            "score": np.array(xs, np.int32),
            "n_words": np.array(xs, np.int32),
            "longest_word": ["cat"] * n,
            "max_word_len": np.full(n, 3, np.int16),
            "dead_cells": np.zeros(n, np.int16),
            "words_len_3": np.zeros(n, np.int32),
            "points_len_3": np.zeros(n, np.int32),
        }
        return part_stats(pa.table(cols), tag="t", chunk=chunk, bins=["3"])

    def std(xs: list[int]) -> float:
        cut = sorted(rnd.sample(range(1, len(xs)), min(parts, len(xs)) - 1))
        pieces = [xs[a:b] for a, b in zip([0, *cut], [*cut, len(xs)], strict=True)]
        merged = [part(i, p) for i, p in enumerate(pieces)]
        rnd.shuffle(merged)
        return stats.Moments.of(*merge(merged, StatsSpec()).value_counts("score")).std

    n, s1, s2 = len(scores), sum(scores), sum(v * v for v in scores)
    want = math.sqrt(float(n * s2 - s1 * s1) / float(n * (n - 1)))
    shuffled = list(scores)
    rnd.shuffle(shuffled)
    assert std(scores) == want
    assert std(shuffled) == want


@given(st.lists(st.integers(0, 60), min_size=1, max_size=200), st.floats(0, 1))
def test_quantiles_from_counts_equal_numpy_percentile(sample: list[int], q: float) -> None:
    values, counts = np.unique(sample, return_counts=True)
    got = stats.quantiles_from_counts(values, counts, [q, 0.5])
    assert got == pytest.approx([np.percentile(sample, q * 100), np.median(sample)], abs=1e-9)


def test_by_length_longest_and_top_boards(alpha: Path) -> None:
    g = gathered([alpha])
    bl = stats.by_length(g)
    lw = stats.longest_words(g)
    top = stats.top_boards(g, 2)
    assert list(bl["length"]) == ["3", "4", "5", "6", "7", "8", "9+"]
    r3, r4, r5 = (one(bl, length=k) for k in ("3", "4", "5"))
    assert (r3["words_total"], r3["points_total"]) == (13, 13)
    assert (r4["words_total"], r4["points_total"]) == (5, 5)
    assert (r5["words_total"], r5["points_total"]) == (1, 2)
    assert r3["words_per_board"] == pytest.approx(2.6)
    assert r3["share_of_points"] == pytest.approx(13 / 20)
    assert r5["share_of_words"] == pytest.approx(1 / 19)
    assert bl["points_total"].sum() == 20  # = the sum of the scores
    assert dict(zip(lw["length"], lw["boards"], strict=True)) == {3: 3, 4: 1, 5: 1}
    assert one(lw, length=5)["example"] == "acute"
    assert list(top["board"]) == ["[th]ose", "cate"]
    assert list(top["score"]) == [10, 4]
    assert top.iloc[1]["words"] == "acute cat eat"


def test_top_boards_break_ties_by_board_id(tmp_path: Path) -> None:
    boards = [{"board": b, "source": "new", "words": ["cat", "eat"], "dead_cells": 0} for b in "abcdefg"]
    boards[4]["words"] = ["acute"]  # also 2 points
    boards[6]["words"] = ["acute", "cat"]  # the best, 3 points
    run = write_run(tmp_path / "ties", [dict(b, board=b["board"] * 4) for b in boards], chunk_size=2)
    g = gathered([run])
    top = stats.top_boards(g, 4)
    assert list(top["board_id"]) == [6, 0, 1, 2]
    assert list(top["rank"]) == [1, 2, 3, 4]


def test_frequent_words_share_of_boards(alpha: Path) -> None:
    g = gathered([alpha])
    fw = stats.frequent_words(g, 3)
    assert list(fw["word"]) == ["cat", "eat", "acute"]  # ties by word
    assert list(fw["boards"]) == [2, 2, 1]
    assert list(fw["share"]) == pytest.approx([0.4, 0.4, 0.2])


def test_face_effects_exact(alpha: Path) -> None:
    g = gathered([alpha])
    fe = stats.face_effects(g)
    a = one(fe, face="a")  # on boards scoring 1, 3, 4; not on 2, 10
    assert a["boards_with"] == 3 and a["boards_without"] == 2
    assert a["mean_score_with"] == pytest.approx(8 / 3)
    assert a["mean_score_without"] == pytest.approx(6.0)
    assert a["effect"] == pytest.approx(8 / 3 - 6)
    th = one(fe, face="th")  # multi-letter face from "[th]"
    assert th["share_with"] == pytest.approx(0.2)
    assert th["effect"] == pytest.approx(10 - 2.5)
    qu = one(fe, face="qu")  # compact "q" is the Qu cell
    assert qu["effect"] == pytest.approx(3 - 17 / 4)
    assert set(fe["face"]) == {"a", "c", "d", "e", "g", "o", "qu", "s", "t", "th"}
    assert fe.iloc[0]["face"] == "th"  # the strongest positive effect first


def test_face_decoding_matches_the_compact_notation() -> None:
    """Boards as the store writes them (format_compact) decode back to their faces, cell by
    cell, from an Arrow column (the statistics' parser) as parse_compact reads them."""
    import pyarrow as pa

    from pipeline.stats import BLANK_FACE, decode_column

    rng = np.random.default_rng(5)
    faces = ["a", "b", "qu", "", "th", "q", "ż", "é", "·l", "in", "ss", "ĳ"]
    boards = [Board(3, 3, tuple(str(f) for f in rng.choice(faces, size=9))) for _ in range(300)]
    texts = [format_compact(b) for b in boards]
    for column in (pa.array(texts), pa.array([t for t in texts if t.isascii() and "[" not in t])):
        names, codes = decode_column(column, 3, 3)
        for text, row in zip(column.to_pylist(), codes, strict=True):
            want = parse_compact(text, (3, 3)).faces
            assert [names[c] for c in row] == [BLANK_FACE if f == "" else f for f in want], text


def test_face_effects_match_parse_compact_on_mixed_boards(tmp_path: Path) -> None:
    """Single-character boards (the byte-buffer path) and bracketed ones (the parser's path)
    together, in parts of both kinds, agree with a board-by-board reference."""
    rng = np.random.default_rng(11)
    plain = ["a", "e", "s", "t", "qu", "", "ż", "é", "x"]
    multi = [*plain, "th", "in", "q", "·l"]
    vocab = ["tea", "seat", "teas", "zest", "quest", "east", "eats", "ate"]
    boards = []
    for i in range(240):
        faces = rng.choice(multi if i % 4 == 0 else plain, size=9)
        boards.append(
            {
                "board": format_compact(Board(3, 3, tuple(str(f) for f in faces))),
                "rows": 3,
                "cols": 3,
                "source": "mix",
                "dead_cells": 0,
                "words": [str(w) for w in rng.choice(vocab, size=int(rng.integers(0, 6)), replace=False)],
            }
        )
    run = write_run(tmp_path / "mix", boards, chunk_size=100)
    g = gathered([run])
    fe = stats.face_effects(g)
    rows = make_rows(boards)
    scores = np.array([r["score"] for r in rows], dtype=float)
    face_sets = [set(parse_compact(r["board"], (3, 3)).faces) - {""} for r in rows]
    assert set(fe["face"]) == set().union(*face_sets)
    for rec in fe.to_dict("records"):
        mask = np.array([rec["face"] in f for f in face_sets])
        assert rec["boards_with"] == mask.sum(), rec["face"]
        assert rec["mean_score_with"] == pytest.approx(scores[mask].mean())
        assert rec["mean_score_without"] == pytest.approx(scores[~mask].mean())
    effects = fe["effect"].to_numpy()
    assert (np.diff(effects) <= 1e-12).all()  # strongest first


# ---------------------------------------------------------------- several runs


def test_two_runs_compare_side_by_side(alpha: Path, beta: Path) -> None:
    t = stats.compute_tables(gathered([alpha, beta], StatsSpec(top=1)), top=1, top_words=2)
    s = t.summary
    assert list(zip(s["run"], s["source"], strict=True)) == [
        ("alpha", "new"),
        ("beta", "a.txt"),
        ("beta", "b.txt"),
        ("beta", "(all)"),
    ]
    assert one(s, run="beta", source="a.txt")["score_mean"] == pytest.approx((0 + 6) / 2)
    total = one(s, run="beta", source="(all)")
    assert total["boards"] == 3
    assert total["score_mean"] == pytest.approx((0 + 6 + 1) / 3)
    assert total["share_dead_ge1"] == pytest.approx(1 / 3)
    # Blanks are not faces; a face on every board of a group has no "without" mean.
    fe = t.face_effects
    assert "." not in set(fe["face"]) and "" not in set(fe["face"])
    b_only = fe[(fe["run"] == "beta") & (fe["source"] == "b.txt")]
    assert b_only["mean_score_without"].isna().all()
    # Histograms share their bins across runs, so the overlaid curves are comparable.
    h = t.score_histogram
    widths = set((h["bin_hi"] - h["bin_lo"]).tolist())
    assert widths == {1}
    for (_run, _src), g in h.groupby(["run", "source"]):
        assert g["share"].sum() == pytest.approx(1.0)
    assert set(zip(t.top_boards["run"], t.top_boards["board"], strict=True)) == {
        ("alpha", "[th]ose"),
        ("beta", "bade"),
        ("beta", "ba.e"),
    }


def test_runs_with_one_name_get_distinct_labels(tmp_path: Path) -> None:
    a = write_run(tmp_path / "x" / "run", ALPHA)
    b = write_run(tmp_path / "y" / "run", BETA)
    labels = [r.label for r in load_runs([a, b])]
    assert labels[0] == "run" and labels[1] != "run" and len(set(labels)) == 2
    assert default_out_dir(load_runs([a, b])).parent == Path("reports")


def test_other_min_length_adds_length_columns(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "short",
        [
            {"board": "abcd", "source": "new", "words": ["ab", "abc"], "dead_cells": 1},
        ],
        min_length=2,
    )
    g = gathered([run])
    bl = stats.by_length(g)
    assert list(bl["length"])[:2] == ["2", "3"]
    assert one(bl, length="2")["words_total"] == 1


# ---------------------------------------------------------------- outputs and report


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, str]] = []
        self.links: list[str] = []
        self._fig: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "figure":
            self._fig = {"plot": a.get("data-plot", "")}
            self.figures.append(self._fig)
        elif tag == "img" and self._fig is not None:
            self._fig["src"] = a.get("src", "")
            self._fig["alt"] = a.get("alt", "")
        elif tag == "a":
            self.links.append(a.get("href", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._fig = None


@pytest.mark.integration
def test_analyze_writes_tables_plots_and_a_self_contained_report(
    alpha: Path, beta: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    res = analyze_runs([alpha, beta], out, top=3, top_words=5)
    assert res.report == out / "report.html"
    # Tables: Parquet and CSV hold the same numbers as the returned frames.
    for name, frame in res.tables.items():
        back = pd.read_parquet(out / "tables" / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, frame, check_dtype=False)
        csv = pd.read_csv(out / "tables" / f"{name}.csv")
        assert len(csv) == len(frame) and list(csv.columns) == list(frame.columns)
    summ = pd.read_csv(out / "tables" / "summary.csv")
    assert one(summ, run="alpha", source="new")["score_p90"] == pytest.approx(7.6)
    # Every plot the analysis claims is a PNG on disk and embedded, byte for byte, in the page.
    claimed = json.loads((out / "analysis.json").read_text())["plots"]
    assert {
        "score_distribution.png",
        "words_distribution.png",
        "points_by_length.png",
        "face_effects.png",
        "longest_word.png",
    } <= set(claimed)
    assert sum(p.startswith("best_board_") for p in claimed) == 3  # one per run/source
    page = res.report.read_text(encoding="utf-8")
    parser = _Figures()
    parser.feed(page)
    assert sorted(f["plot"] for f in parser.figures) == sorted(claimed)
    for fig in parser.figures:
        png = (out / "plots" / fig["plot"]).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        prefix = "data:image/png;base64,"
        assert fig["src"].startswith(prefix)
        assert base64.b64decode(fig["src"][len(prefix) :]) == png
        assert fig["alt"]
    # Relative links resolve from the report's folder; nothing is fetched from a server.
    for href in parser.links:
        if not href.startswith("#"):
            assert (out / href).is_file(), href
    # (Outside the embedded libraries' code, whose strings name their web sites.)
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"(src|href)=\"(https?:)?//", markup)
    # Provenance of each run and the key numbers are on the page.
    for text in ("alpha", "beta", "test-words", "ab" * 32, "4.00", "7.60", "[th]ose", "too short"):
        assert text in page, text


def test_the_interactive_tables_are_embedded_without_importing_itables(
    alpha: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report embeds itables' DataTables bundle read from the installed package's folder,
    the package never imported (it imports polars: 0.5 CPU-s of every analysis); without
    the package the tables are static, and the report says so."""
    import subprocess
    import sys

    import pipeline.analyze._interactive as interactive

    code = (
        "import sys; import pipeline.analyze._interactive as i\n"
        "print(i.available(), 'itables' in sys.modules, 'polars' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr[-1000:]
    page = analyze_runs([alpha], tmp_path / "with").report.read_text(encoding="utf-8")
    assert "DataTables from itables" in page
    interactive._bundle.cache_clear()
    monkeypatch.setattr(interactive, "_package_folder", lambda name: None)
    try:
        page = analyze_runs([alpha], tmp_path / "without").report.read_text(encoding="utf-8")
    finally:
        interactive._bundle.cache_clear()
    assert "static (itables is not installed)" in page and "DataTables from itables" not in page


@pytest.mark.integration
def test_rerun_replaces_stale_outputs(alpha: Path, beta: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    analyze_runs([alpha, beta], out)
    assert (out / "plots" / "best_board_beta-b-txt.png").is_file()
    analyze_runs([alpha], out)
    assert not (out / "plots" / "best_board_beta-b-txt.png").exists()
    assert (out / "plots" / "best_board_alpha.png").is_file()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "beta" not in re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)  # not plotly.js's


def test_unfinished_run_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "half", ALPHA, finished=False)
    with pytest.raises(BoggleError, match="_SUCCESS"):
        load_run(run)


def test_part_without_required_columns_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "odd", ALPHA)
    part = run / "part-00000.parquet"
    import pyarrow.parquet as pq

    from pipeline.store._parts import record_part

    pq.write_table(pq.read_table(part).drop_columns(["dead_cells"]), part)
    info = record_part(run, 0, 3).to_dict()  # a consistent run, only the column is missing
    reseal(run, lambda m: m["parts"].__setitem__(0, info))
    with pytest.raises(BoggleError, match="dead_cells"):
        gathered([run])


def test_parts_that_disagree_with_the_manifest_are_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "edited", ALPHA)
    reseal(run, lambda m: m["counts"].update(boards=6))
    with pytest.raises(DamagedRunError, match="records 6 boards, its parts hold 5"):
        analyze_runs([run], tmp_path / "out")


# ---------------------------------------------------------------- CLI


@pytest.mark.integration
def test_cli_analyze_prints_the_report_path(alpha: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-report"
    res = CliRunner().invoke(app, ["analyze", str(alpha), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert str(out / "report.html") in res.stdout
    assert (out / "report.html").is_file()


def test_cli_refuses_unfinished_run_with_exit_2(tmp_path: Path) -> None:
    run = write_run(tmp_path / "half", ALPHA, finished=False)
    res = CliRunner().invoke(app, ["analyze", str(run), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "_SUCCESS" in lines[0] and str(run) in lines[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("damage", ["truncate", "scramble"])
def test_cli_refuses_a_damaged_part(tmp_path: Path, damage: str) -> None:
    run = write_run(tmp_path / "damaged", ALPHA)
    part = run / "part-00000.parquet"
    data = bytearray(part.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:  # keep the footer (schema) intact, garble the column data
        for i in range(8, len(data) // 3):
            data[i] ^= 0x5A
    part.write_bytes(bytes(data))
    res = CliRunner().invoke(app, ["analyze", str(run), "--out", str(tmp_path / "o"), "--quiet"])
    assert res.exit_code == 4, res.output  # the store's readers verify every part (DamagedRunError)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "damaged" in lines[0]
    assert lines[0].isprintable()


def test_cli_refuses_missing_directory(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["analyze", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- real solved boards


def test_real_boards_agree_with_a_plain_python_reference(enable_lexicon: Any, tmp_path: Path) -> None:
    """Solve rolled boards, store them like the pipeline does, and recompute every statistic
    from the rows in plain Python/pandas."""
    from pipeline.boards import generate_boards
    from pipeline.solve import solve_arrays
    from pipeline.store import results_table

    runs = []
    for k, dice in enumerate(("new", "classic")):
        boards = generate_boards(dice, enable_lexicon.alphabet, np.random.default_rng(k), 300)
        result = solve_arrays(boards, 4, 4, enable_lexicon)
        table = results_table(boards, 4, 4, np.arange(300), result, enable_lexicon, source=dice, chunk=0)
        run_dir = tmp_path / dice
        run_dir.mkdir()
        data = {"boards": {"source": "generate", "count": 300, "chunk_size": 128}}  # runs labelled by name
        meta = parquet_metadata(data, enable_lexicon.provenance(), enable_lexicon.rules.to_dict())
        parts = []
        for chunk, lo in enumerate(range(0, 300, 128)):
            part = table.slice(lo, 128)
            parts.append(
                PartInfo(
                    chunk=chunk, rows=part.num_rows, bytes=write_part(run_dir, chunk, part, meta)
                ).to_dict()
            )
        fields = {"identity": {"data": data}, "config": {}, "counts": {"boards": 300}, "parts": parts}
        write_manifest(run_dir, {**fields, "lexicon": enable_lexicon.provenance()})
        runs.append(run_dir)
    t = stats.compute_tables(gathered(runs), top=5, top_words=10)
    for run_dir in runs:
        df = pd.concat([pd.read_parquet(p) for p in sorted(run_dir.glob("part-*.parquet"))])
        name = run_dir.name
        s = one(t.summary, run=name)
        assert s["boards"] == 300
        assert s["score_mean"] == pytest.approx(df["score"].mean())
        assert s["score_median"] == pytest.approx(df["score"].median())
        assert s["score_std"] == pytest.approx(df["score"].std())
        assert s["words_p90"] == pytest.approx(np.percentile(df["n_words"], 90))
        assert s["share_lt25_words"] == pytest.approx((df["n_words"] < 25).mean())
        assert s["share_dead_ge1"] == pytest.approx((df["dead_cells"] >= 1).mean())
        # Most frequent words: count boards per word in Python.
        counts: dict[str, int] = {}
        for words in df["words"]:
            for w in set(words):
                counts[w] = counts.get(w, 0) + 1
        want = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        fw = t.frequent_words[(t.frequent_words["run"] == name) & (t.frequent_words["rank"] <= 10)]
        assert list(zip(fw["word"], fw["boards"], strict=True)) == want
        # Face effects from parse_compact, board by board.
        faces = [set(parse_compact(b).faces) - {""} for b in df["board"]]
        fe = t.face_effects[t.face_effects["run"] == name]
        for rec in fe.to_dict("records"):
            mask = np.array([rec["face"] in f for f in faces])
            assert rec["boards_with"] == mask.sum()
            assert rec["mean_score_with"] == pytest.approx(df["score"].to_numpy()[mask].mean())
            if (~mask).any():
                assert rec["mean_score_without"] == pytest.approx(df["score"].to_numpy()[~mask].mean())
        assert len(fe) == len(set().union(*faces))
        top = t.top_boards[t.top_boards["run"] == name]
        best = df.sort_values(["score", "board_id"], ascending=[False, True]).head(5)
        assert list(top["board_id"]) == list(best["board_id"])  # ties: lower board_id first
        assert list(top["words"]) == [" ".join(w) for w in best["words"]]
        bl = t.by_length[t.by_length["run"] == name]
        assert bl["points_total"].sum() == df["score"].sum()
        assert bl["words_total"].sum() == df["n_words"].sum()
