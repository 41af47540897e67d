"""Issue 18, the input, config and command-line side: memory stays bounded on hostile input
(/dev/zero, a gzip bomb, an endless line, a huge count, chunk size or shape), an input replaced
while a run reads it is never certified, and every refusal is one line with its exit code,
made before anything is allocated or any directory created.

The memory checks run in a subprocess under a 1.5 GB address-space limit: code that reads
everything, or builds one object per chunk, dies there with a MemoryError.
"""

from __future__ import annotations

import csv
import io
import json
import os
import select
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.boards import MAX_CHUNK_SIZE, chunk_plan, ingest
from pipeline.boards.ingest import (
    check_unchanged,
    fingerprint,
    iter_ingest_chunks,
    write_rejects_header,
)
from pipeline.cli import app
from pipeline.config import MAX_COUNT
from pipeline.errors import BoggleError, InternalError
from pipeline.io import MAX_LINE_BYTES
from pipeline.lexicon.trie import Alphabet
from tests.conftest import REPO, limit_memory, one_error_line

SMOKE = REPO / "configs" / "smoke.toml"
CLI = CliRunner()
ALPHABET = Alphabet.english()


def limited(args: list[str | bytes], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``args`` (after the interpreter) under the memory limit, from the repository."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        preexec_fn=limit_memory,
        timeout=timeout,
    )


def boggle(*args: str | bytes | Path) -> subprocess.CompletedProcess[str]:
    return limited(["-m", "pipeline.cli", *(a if isinstance(a, bytes) else str(a) for a in args)])


def one_line(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The one error line of a command refused with ``code`` (no traceback, no MemoryError)."""
    assert "MemoryError" not in proc.stderr and proc.returncode == code, proc.stderr[-2000:]
    return one_error_line(proc, *needles)


def cli_in_subprocess(*commands: list[str]) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of each ``boggle`` command, run in one interpreter under the
    memory limit: a command that allocates before refusing dies there, not in the test run."""
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from pipeline.cli import app\n"
        "out = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    out.append((r.exit_code, r.stdout[:2000], r.stderr[-2000:]))\n"
        "print(json.dumps(out))\n"
    )
    proc = limited(["-c", code, json.dumps(list(commands))])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(r) for r in json.loads(proc.stdout)]


def ingest_in_subprocess(path: str) -> subprocess.CompletedProcess[str]:
    """Read every chunk of ``path`` as a run would, under the memory limit; prints the one-line
    error or the counts."""
    code = (
        "import sys\n"
        "from pipeline.errors import BoggleError\n"
        "from pipeline.boards.ingest import iter_ingest_chunks\n"
        "from pipeline.lexicon.trie import Alphabet\n"
        "n = r = 0\n"
        "try:\n"
        "    for ch in iter_ingest_chunks([sys.argv[1]], Alphabet.english(), 10_000):\n"
        "        n += ch.n_input; r += len(ch.rejects)\n"
        "except BoggleError as exc:\n"
        "    print('refused:', exc.one_line()); sys.exit(2)\n"
        "print('read', n, 'rejected', r)\n"
    )
    return limited(["-c", code, path], timeout=60)


def gzip_bomb(path: Path, block: bytes, total: int) -> Path:
    """``block`` repeated to ``total`` bytes as a multi-member gzip file (gzip readers read the
    members as one stream), compressed once through zlib: about 1/1000 of ``total`` on disk."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = deflate.compress(block) + deflate.flush()
    with open(path, "wb") as fh:
        for _ in range(-(-total // len(block))):
            fh.write(member)
    return path


def chunks_of(path: Path, chunk_size: int = 10_000) -> list[ingest.IngestChunk]:
    return list(iter_ingest_chunks([str(path)], ALPHABET, chunk_size))


# ---------------------------------------------------------------- hostile inputs, under the limit


def test_dev_zero_and_a_fifo_are_refused_before_reading(tmp_path: Path) -> None:
    proc = ingest_in_subprocess("/dev/zero")
    assert proc.returncode == 2 and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.strip() == (
        "refused: /dev/zero: not a regular file (a device); ingest reads regular files only"
    )
    fifo = tmp_path / "boards.txt"
    os.mkfifo(fifo)  # nobody writes: reading it would block for ever
    proc = ingest_in_subprocess(str(fifo))
    assert proc.returncode == 2 and "not a regular file (a FIFO)" in proc.stdout
    with pytest.raises(BoggleError, match="not a regular file"):
        fingerprint("/dev/zero")


@pytest.mark.slow
def test_dev_zero_as_run_input_is_one_line_and_no_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = boggle("run", SMOKE, "--input", "/dev/zero", "--out", out, "-q")
    one_line(proc, 2, "/dev/zero: not a regular file (a device)")
    assert not out.exists()


def test_gzip_bomb_is_refused_while_streaming(tmp_path: Path) -> None:
    # 1 GB of zeros (one endless line) in 1 MB: skipped as an overlong line without being held,
    # then refused at 100 x the file's size
    bomb = gzip_bomb(tmp_path / "boards.txt.gz", bytes(16 << 20), 1 << 30)
    assert bomb.stat().st_size < 2 << 20
    t0 = time.monotonic()
    proc = ingest_in_subprocess(str(bomb))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"refused: {bomb}: gzip input inflates to more than" in proc.stdout
    assert "decompression bomb" in proc.stdout
    assert time.monotonic() - t0 < 30


def test_gzip_bomb_of_lines_is_refused_at_the_ratio(tmp_path: Path) -> None:
    # 256 MB of comment lines in 0.25 MB compresses far better than any real input: refused at
    # 64 MB (100 x the file's size is less) instead of read to the end
    bomb = gzip_bomb(tmp_path / "boards.txt.gz", (b"#" + b"a" * 998 + b"\n") * (16 << 10), 256 << 20)
    with pytest.raises(BoggleError, match="refused as a likely decompression bomb"):
        chunks_of(bomb)


def test_ordinary_gzip_input_reads_and_fingerprints_whole(tmp_path: Path) -> None:
    import gzip

    f = tmp_path / "b.txt.gz"
    f.write_bytes(gzip.compress(b"perslatgsineters\nabc\n" * 1000))
    digests: dict[str, ingest.InputDigest] = {}
    chunks = list(iter_ingest_chunks([str(f)], ALPHABET, 500, digests=digests))
    assert sum(c.n_input for c in chunks) == 2000 and sum(len(c.rejects) for c in chunks) == 1000
    fp = fingerprint(str(f))
    assert (digests[str(f)].sha256, digests[str(f)].bytes) == (fp["sha256"], fp["bytes"])
    check_unchanged([fp], digests)  # unchanged: no complaint


# ---------------------------------------------------------------- line length


def test_overlong_line_is_one_reject_and_the_run_goes_on(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"perslatgsineters\n" + b"a" * 200_000 + b"\nqqqqqqqqqqqqqqqq\n" + b"b" * 100_000)
    chunks = chunks_of(f, 2)
    assert sum(c.n_input for c in chunks) == 4  # the counts add up
    assert sum(c.n_valid for c in chunks) == 2
    rejects = [r for c in chunks for r in c.rejects]
    assert [(r.line, r.reason) for r in rejects] == [
        (2, f"line longer than {MAX_LINE_BYTES:,} bytes (200,001 bytes); not read"),
        (4, f"line longer than {MAX_LINE_BYTES:,} bytes (100,000 bytes); not read"),
    ]
    assert all(len(r.raw) < 120 for r in rejects)


def test_overlong_csv_line_and_grid_board_are_rejects(tmp_path: Path) -> None:
    f = tmp_path / "b.csv"
    f.write_bytes(b"id,board\n1,perslatgsineters\n2," + b"x" * 100_000 + b"\n3,qqqqqqqqqqqqqqqq\n")
    chunks = chunks_of(f)
    assert chunks[0].n_input == 3 and chunks[0].n_valid == 2
    ((line, reason),) = [(r.line, r.reason) for r in chunks[0].rejects]
    assert line == 3 and reason.startswith(f"line longer than {MAX_LINE_BYTES:,} bytes")
    g = tmp_path / "grid.txt"
    rows = ("a b c d\n" * 4 + "\n") + ("e " * 20_000 + "\n") * 5 + "\n" + "a b c d\n" * 4
    g.write_text(rows)
    chunks = chunks_of(g)
    assert chunks[0].n_input == 3 and chunks[0].n_valid == 2
    assert chunks[0].rejects[0].reason == f"board text longer than {MAX_LINE_BYTES:,} characters"


def test_header_line_too_long_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "b.csv"
    f.write_bytes(b"x" * 100_000 + b"\nperslatgsineters\n")
    with pytest.raises(BoggleError, match=r"b.csv:1: header line longer than"):
        chunks_of(f)


# ---------------------------------------------------------------- rejects keep no control bytes


def test_rejects_escape_control_characters(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"perslatgsineters\n\x1b[2Jevil\x07\n12\x00ab\\x1b\n")
    rejects = [r for c in chunks_of(f) for r in c.rejects]
    assert [r.raw for r in rejects] == ["\\x1b[2Jevil\\x07", "12\\x00ab\\\\x1b"]
    buf = io.StringIO()
    writer = write_rejects_header(buf)
    for r in rejects:
        writer.writerow(r.row())
    text = buf.getvalue()
    assert not any(ord(ch) < 0x20 and ch not in "\r\n" for ch in text)
    assert [row[2] for row in csv.reader(io.StringIO(text))][1:] == [r.raw for r in rejects]


# ---------------------------------------------------------------- an input changed mid-run


def _replace_after_first_chunk(path: Path, new: bytes, in_place: bool) -> tuple[list[dict], dict]:
    fp = [fingerprint(str(path))]
    digests: dict[str, ingest.InputDigest] = {}
    for chunk in iter_ingest_chunks([str(path)], ALPHABET, 2, digests=digests):
        if chunk.chunk == 0:
            if in_place:
                with open(path, "r+b") as fh:  # same inode, same size, new bytes
                    fh.write(new)
            else:
                tmp = path.with_name("new.txt")
                tmp.write_bytes(new)
                os.replace(tmp, path)
    return fp, digests


def test_input_replaced_mid_ingest_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"perslatgsineters\n" * 6)
    fp, digests = _replace_after_first_chunk(f, b"qqqqqqqqqqqqqqqq\n" * 6, in_place=False)
    # what was read is the old file (its handle stayed open), but the path names another now
    assert digests[str(f)].sha256 == fp[0]["sha256"]
    with pytest.raises(BoggleError, match=r"b.txt: input file replaced or modified while the run read it"):
        check_unchanged(fp, digests)


def test_input_rewritten_in_place_mid_ingest_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"perslatgsineters\n" * 6)
    fp, digests = _replace_after_first_chunk(f, b"qqqqqqqqqqqqqqqq\n" * 2, in_place=True)
    with pytest.raises(BoggleError, match="nothing was certified"):
        check_unchanged(fp, digests)


def test_input_replaced_between_fingerprint_and_reading_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_bytes(b"perslatgsineters\n")
    fp = [fingerprint(str(f))]
    f.write_bytes(b"qqqqqqqqqqqqqqqq\n")
    digests: dict[str, ingest.InputDigest] = {}
    list(iter_ingest_chunks([str(f)], ALPHABET, 2, digests=digests))
    with pytest.raises(BoggleError, match="replaced or modified"):
        check_unchanged(fp, digests)
    with pytest.raises(InternalError):  # a file never read to its end cannot be certified
        check_unchanged(fp, {})


@pytest.mark.slow
def test_run_whose_input_is_replaced_mid_run_is_not_certified(
    tmp_path: Path, enable2k_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline import store
    from pipeline.config import load_config
    from pipeline.runner import run_job

    f = tmp_path / "boards.txt"
    f.write_bytes(b"perslatgsineters\n" * 40)
    real = ingest.BoardParser.parse
    replaced = threading.Event()

    def parse_then_replace(self: ingest.BoardParser, chunk: int, records: list) -> ingest.IngestChunk:
        if chunk == 0 and not replaced.is_set():
            tmp = tmp_path / "new.txt"
            tmp.write_bytes(b"qqqqqqqqqqqqqqqq\n" * 40)
            os.replace(tmp, f)
            replaced.set()
        return real(self, chunk, records)

    monkeypatch.setattr(ingest.BoardParser, "parse", parse_then_replace)
    out = tmp_path / "run"
    cfg = load_config(
        None,
        {
            "boards.source": "ingest",
            "boards.files": [str(f)],
            "boards.chunk_size": 10,
            "lexicon.path": enable2k_path,
            "run.out": str(out),
            "run.n_jobs": 1,
            "run.backend": "threading",
        },
    )
    with pytest.raises(BoggleError, match=r"boards.txt: input file replaced or modified while the run"):
        run_job(cfg)
    assert replaced.is_set() and not (out / store.MANIFEST).exists()


# ---------------------------------------------------------------- counts, chunk sizes, shapes


def test_chunk_plan_is_lazy() -> None:
    # 10^11 chunks: nothing is made until asked for (under the limit: a list would not fit)
    code = (
        "from pipeline.boards import chunk_plan\n"
        f"plan = chunk_plan({MAX_COUNT}, 1)\n"
        "print(len(plan), plan[-1].start, plan[-1].count)\n"
    )
    proc = limited(["-c", code], timeout=60)
    assert proc.stdout.split() == [str(MAX_COUNT), str(MAX_COUNT - 1), "1"], proc.stderr[-2000:]
    assert [c.count for c in chunk_plan(10, 4)[1:]] == [4, 2]
    with pytest.raises(InternalError):
        chunk_plan(5, 0)


@pytest.mark.slow
def test_generate_huge_count_prints_its_first_boards_at_once() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "pipeline.cli", "generate", "--count", str(MAX_COUNT), "--seed", "3"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO, preexec_fn=limit_memory
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        deadline = time.monotonic() + 60
        got = b""
        while got.count(b"\n") < 5 and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            if ready:
                more = os.read(proc.stdout.fileno(), 65536)
                if not more:
                    break
                got += more
        lines = got.decode().splitlines()[:5]
        assert len(lines) == 5, (got[-500:], proc.poll())
        assert all(len(line) == 16 and line.isalpha() for line in lines)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    # the boards of chunk 0, as any count of at least one chunk gives them
    first = CLI.invoke(app, ["generate", "--count", "10000", "--seed", "3"]).output.splitlines()
    assert first[:5] == lines


GENERATE_CAPS = [
    (["--count", str(MAX_COUNT + 1)], f"count: at most {MAX_COUNT:,}"),
    (["--chunk-size", "10000000"], f"--chunk-size: at most {MAX_CHUNK_SIZE:,}"),  # the option's own cap
    (["--dice", "uniform", "--shape", "100000x100000"], "shape: 100000x100000 has 10,000,000,000 cells"),
]


def test_generate_beyond_the_caps_is_one_line() -> None:
    results = cli_in_subprocess(*(["generate", *args] for args, _ in GENERATE_CAPS))
    for (code, stdout, stderr), (_, needle) in zip(results, GENERATE_CAPS, strict=True):
        assert code == 2 and stdout == "", (code, stdout[:200], stderr)
        assert stderr.startswith("error: ") and stderr.count("\n") == 1 and needle in stderr, stderr


RUN_CAPS = [
    (["--chunk-size", "10000000"], f"--chunk-size: at most {MAX_CHUNK_SIZE:,}"),  # the option, not the file
    # 999,999 parts of 10,000,000 boards: within the old caps, about 20 GB a worker
    (["--count", "9999990000000", "--chunk-size", "10000000"], f"count: at most {MAX_COUNT:,}"),
    (["--dice", "uniform", "--shape", "100000x100000"], "shape: 100000x100000 has 10,000,000,000 cells"),
    (["--dice", "uniform", "--shape", "100x100", "--chunk-size", "10000"], "chunk_size to at most 1,600"),
]
RUN_CAP_IDS = ["chunk-size", "count", "shape", "chunk-cells"]


def test_run_beyond_the_caps_is_one_line_and_no_directory(tmp_path: Path) -> None:
    commands = []
    for k, (args, _) in enumerate(RUN_CAPS):
        out = tmp_path / RUN_CAP_IDS[k]
        summary = out / "summary.json"  # inside the run: must not create it either
        commands.append(["run", str(SMOKE), *args, "--out", str(out), "-q", "--summary-json", str(summary)])
    for k, (code, _, stderr) in enumerate(cli_in_subprocess(*commands)):
        assert code == 2, (RUN_CAP_IDS[k], stderr)
        (line,) = [ln for ln in stderr.splitlines() if not ln.startswith("warning: ")]
        assert line.startswith("error: ") and RUN_CAPS[k][1] in line, line
        # an option beyond its own cap is refused before the command starts (nothing to record);
        # one the config refuses, by the command, which records it where it can
        if "--summary-json" in stderr or "summary.json" in stderr:
            assert "/summary.json: its folder does not exist; not written" in stderr
        assert not (tmp_path / RUN_CAP_IDS[k]).exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(("args", "needle"), RUN_CAPS, ids=RUN_CAP_IDS)
def test_run_beyond_the_caps_as_a_command(tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "run"
    one_line(boggle("run", SMOKE, *args, "--out", out, "-q"), 2, needle)
    assert not out.exists()


def test_ingest_shape_is_capped_too(tmp_path: Path) -> None:
    out = tmp_path / "run"
    f = tmp_path / "b.txt"
    f.write_text("perslatgsineters\n")
    result = CLI.invoke(app, ["run", str(SMOKE), "--input", str(f), "--shape", "1x100000", "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "error: --shape: 1x100000 has 100,000 cells" in result.stderr
    assert not out.exists()
    # without a shape, a board beyond the cap is a reject, like any bad row
    g = tmp_path / "big.txt"
    g.write_text("a" * 10_201 + "\nperslatgsineters\n")  # 101x101
    chunks = chunks_of(g)
    assert chunks[0].n_valid == 1
    assert chunks[0].rejects[0].reason == "board 101x101 has 10,201 cells; at most 10,000 (100x100)"


# ---------------------------------------------------------------- names that are not UTF-8


@pytest.mark.slow
def test_non_utf8_input_name_is_one_line_under_the_memory_limit(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/bo\xffards.txt"
    with open(name, "wb") as fh:
        fh.write(b"perslatgsineters\n")
    out = tmp_path / "run"
    line = one_line(boggle("run", SMOKE, "--input", name, "--out", out, "-q"), 2, "is not a UTF-8 name")
    assert "bo\\xffards.txt" in line
    assert not out.exists()


def test_non_utf8_input_name_is_one_line(tmp_path: Path) -> None:
    name = os.fsdecode(os.fsencode(tmp_path) + b"/bo\xffards.txt")  # as Python gives it from argv
    with open(name, "wb") as fh:
        fh.write(b"perslatgsineters\n")
    out = tmp_path / "run"
    result = CLI.invoke(app, ["run", str(SMOKE), "--input", name, "--out", str(out), "-q"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "bo\\xffards.txt' is not a UTF-8 name; rename it" in result.stderr
    assert not out.exists()


def test_messages_naming_non_utf8_paths_print(tmp_path: Path) -> None:
    from pipeline.cli._outcome import error_outcome, printable

    assert printable("bo\udcffards") == "bo\\xffards" and printable("caf\u00e9") == "caf\u00e9"
    code, line = error_outcome(BoggleError("input file not found", source="bo\udcffards.txt"))
    assert (code, line) == (2, "error: bo\\xffards.txt: input file not found")
    line.encode("utf-8")  # printable anywhere


# ---------------------------------------------------------------- the command line's own checks


def test_analyze_report_folder_inside_a_run_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "part-00000.parquet").write_bytes(b"")
    before = sorted(run.iterdir())
    for out in (run, run / "report"):
        result = CLI.invoke(app, ["analyze", str(run), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert "is inside the run directory" in result.output
        assert sorted(run.iterdir()) == before


@pytest.mark.slow  # imports the analysis modules (seconds)
def test_analyze_threads_capped_at_the_cores(tmp_path: Path) -> None:
    result = CLI.invoke(app, ["analyze", str(tmp_path / "missing"), "--threads", "100000"])
    cores = len(os.sched_getaffinity(0))
    assert f"note: --threads 100,000 capped to {cores}" in result.output


def test_internal_error_exits_1_with_please_report(monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.boards

    def broken(*args: object, **kw: object) -> None:
        raise ValueError("a bug")

    monkeypatch.setattr(pipeline.boards, "generate_compact", broken)
    result = CLI.invoke(app, ["generate", "--count", "3"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: internal error (please report it with the command and this line): ValueError: 'a bug'"
    )


def test_io_error_without_a_file_names_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.runner

    def disk_full(*args: object, **kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipeline.runner, "run_from_file", disk_full)
    out = tmp_path / "run"
    result = CLI.invoke(app, ["run", str(SMOKE), "--out", str(out), "-q"])
    assert result.exit_code == 5
    assert f"error: I/O failure: {out}: No space left on device" in result.output
