"""Issue 54, files: every option that reads a file refuses a FIFO, a device and a directory the
way ``--dice`` does (one line, exit 2, at once: a FIFO is never waited on, ``/dev/zero`` never
read), and the class-ids file (``prove --class-ids @FILE``), which blocked on a FIFO and died of
a 200 MB line, is read as a bounded stream.

The file options are listed from the command line (a ``Path``, a ``FILE`` in the metavar, or a
parameter named as the ones that take files): one without a case here fails the listing test.
The commands run in one interpreter under the suite's memory limit, each under an alarm, so a
read that blocks is reported as such instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import typing
from pathlib import Path

import pytest

from pipeline.best.prove._config import MAX_CLASS_ID, parse_class_ids
from pipeline.errors import BoggleError
from tests.conftest import REPO, base_type, cli_commands
from tests.test_limits_input import limited

SMOKE = str(REPO / "configs" / "smoke.toml")
#: Parameters that name a file to read, whatever their type says.
FILE_NAMES = {"dictionary", "dice", "dice_b", "base", "start", "config", "input_files", "class_ids"}
FILE_NAMES |= {"scheduler_file", "contest", "subset", "file"}
#: Outputs (tests/test_hostile_outputs.py checks them) and options that take no file at all.
NOT_READ = {"out", "summary_json"}
NOT_A_FILE = {("prove", "dice")}  # refused whatever it names: proofs take no dice

# (command, parameter) -> the command line, {P} the hostile path, {OUT} an output folder (-q: no
# progress lines, only what the command has to say)
CASES: dict[tuple[str, str], list[str]] = {
    ("solve", "file"): ["solve", "-f", "{P}"],
    ("solve", "dictionary"): ["solve", "perslatgsineters", "-d", "{P}"],
    ("lookup", "dictionary"): ["lookup", "quit", "-d", "{P}"],
    ("words", "dictionary"): ["words", "-d", "{P}"],
    ("words", "dice"): ["words", "--dice", "{P}"],
    ("check", "contest"): ["check", "--contest", "{P}"],
    ("run", "config"): ["run", "{P}", "-o", "{OUT}", "-q"],
    ("run", "dice"): ["run", SMOKE, "--dice", "{P}", "-o", "{OUT}", "-q"],
    ("run", "input_files"): ["run", SMOKE, "-i", "{P}", "-o", "{OUT}", "-q"],
    ("run", "dictionary"): ["run", SMOKE, "-d", "{P}", "-o", "{OUT}", "-q"],
    ("run", "scheduler_file"): [
        "run",
        SMOKE,
        "--backend",
        "dask",
        "--scheduler-file",
        "{P}",
        "-o",
        "{OUT}",
        "-q",
    ],
    ("generate", "dice"): ["generate", "--dice", "{P}"],
    ("optimize", "config"): ["optimize", "{P}", "-o", "{OUT}", "-q"],
    ("optimize", "dictionary"): ["optimize", "-d", "{P}", "-o", "{OUT}", "-q"],
    ("optimize", "dice"): ["optimize", "--dice", "{P}", "-o", "{OUT}", "-q"],
    ("optimize", "subset"): ["optimize", "--objective", "subset", "--subset", "{P}", "-o", "{OUT}", "-q"],
    ("prove", "dictionary"): ["prove", "-d", "{P}", "-o", "{OUT}", "-q"],
    ("prove", "class_ids"): ["prove", "--shape", "2x2", "--class-ids", "@{P}", "-o", "{OUT}", "-q"],
    ("prove", "scheduler_file"): [
        "prove",
        "--backend",
        "dask",
        "--scheduler-file",
        "{P}",
        "-o",
        "{OUT}",
        "-q",
    ],
    ("what-if", "base"): ["what-if", "{P}", "-o", "{OUT}", "-q"],
    ("what-if", "dice_b"): ["what-if", "new", "--dice-b", "{P}", "-o", "{OUT}", "-q"],
    ("what-if", "dictionary"): ["what-if", "new", "-d", "{P}", "-o", "{OUT}", "-q"],
    ("design-dice", "start"): ["design-dice", "--start", "{P}", "-o", "{OUT}", "-q"],
    ("design-dice", "dictionary"): ["design-dice", "-d", "{P}", "-o", "{OUT}", "-q"],
    ("dice show", "dice"): ["dice", "show", "{P}"],
}
DASK = {"scheduler_file"}  # needs the dask extra; without it, the extra's absence is the refusal


def file_options() -> set[tuple[str, str]]:
    """(command, parameter) of every option or argument of the CLI that names a file."""
    found = set()
    for command, _, fn in cli_commands():
        for name, hint in typing.get_type_hints(fn, include_extras=True).items():
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            kind, info = typing.get_args(hint)[:2]
            meta = getattr(info, "metavar", None) or ""
            if base_type(kind) is Path or "FILE" in meta or name in FILE_NAMES:
                found.add((command, name))
    return found


def test_every_file_option_has_a_case() -> None:
    listed = {(c, n) for c, n in file_options() if n not in NOT_READ} - NOT_A_FILE
    assert listed - set(CASES) == set(), "file options without a case in CASES"
    assert set(CASES) - listed == set(), "cases of options the CLI no longer has"


RUNNER = """
import json, signal, sys
from typer.testing import CliRunner
from pipeline.cli import app

def blocked(*_):
    raise TimeoutError("blocked")

signal.signal(signal.SIGALRM, blocked)
out = []
for args in json.loads(sys.argv[1]):
    signal.alarm(90)  # a blocked read; generous: the first command imports the world
    try:
        r = CliRunner().invoke(app, args)
        out.append((r.exit_code, r.stderr[-1000:], repr(r.exception)[:200] if r.exit_code == 1 else ""))
    except TimeoutError:
        out.append((-1, "blocked", ""))
    signal.alarm(0)
print(json.dumps(out))
"""


def _hostile(tmp_path: Path, kind: str) -> Path:
    folder = tmp_path / kind
    folder.mkdir()
    if kind == "fifo":
        path = folder / "in.txt"
        os.mkfifo(path)  # nobody writes: a reader that opens it waits for ever
    elif kind == "directory":
        path = folder / "in.txt"
        path.mkdir()
    else:
        path = Path("/dev/zero")  # never ends
    return path


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_every_file_option_refuses_a_fifo_a_directory_and_a_device(tmp_path: Path, kind: str) -> None:
    import importlib.util

    path = _hostile(tmp_path, kind)
    out = tmp_path / "out"
    cases = {k: v for k, v in CASES.items() if k[1] not in DASK or importlib.util.find_spec("distributed")}
    commands = [
        [a.replace("{P}", str(path)).replace("{OUT}", str(out)) for a in args] for args in cases.values()
    ]
    proc = limited(["-c", RUNNER, json.dumps(commands)], timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for (command, name), (code, stderr, exc) in zip(cases, json.loads(proc.stdout), strict=True):
        what = f"boggle {command} ({name}) on {kind}"
        assert code == 2, (what, code, stderr, exc)
        lines = [ln for ln in stderr.splitlines() if not ln.startswith(("note: ", "warning: "))]
        assert len(lines) == 1 and lines[0].startswith("error: "), (what, stderr)
        assert str(path) in lines[0] or path.name in lines[0], (what, lines[0])
    assert not out.exists()
    if kind == "fifo":
        assert path.is_fifo()


# ---------------------------------------------------------------- the class-ids file


def test_class_ids_file_with_a_200_mb_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    with open(ids, "wb") as fh:
        fh.write(b"12\n")
        for _ in range(200):
            fh.write(b"1" * (1 << 20))  # one line of 200 MB of digits: int() of it took minutes
        fh.write(b"\n")
    code = (
        "import sys\n"
        "from pipeline.errors import BoggleError\n"
        "from pipeline.best.prove._config import parse_class_ids\n"
        "try:\n"
        "    parse_class_ids('@' + sys.argv[1])\n"
        "except BoggleError as exc:\n"
        "    print(exc.one_line()); sys.exit(2)\n"
    )
    proc = limited(["-c", code, str(ids)], timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"{ids}:2: line longer than 65,536 bytes; refused"


def test_class_ids_as_text_and_as_a_file() -> None:
    assert parse_class_ids("3, 1 2") == (3, 1, 2)
    for text, why in (
        ("99999999999999999999999999", "is beyond the largest class id"),
        (str(MAX_CLASS_ID + 1), "is beyond the largest class id"),
        ("1e5", "not a class id"),
        ("١٢", "not a class id"),  # digits, but not ASCII ones
        ("# nothing", "no class ids given"),
    ):
        with pytest.raises(BoggleError, match=why):
            parse_class_ids(text)
    assert parse_class_ids(str(MAX_CLASS_ID)) == (MAX_CLASS_ID,)


def test_class_ids_file_is_read_whole_and_checked(tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("# shard 0\n5\n7, 9  # and more\n\n11\n")
    assert parse_class_ids(f"@{ids}") == (5, 7, 9, 11)
    ids.write_bytes(b"5\n\xff\n")
    with pytest.raises(BoggleError, match=r"ids.txt:2: not UTF-8 text"):
        parse_class_ids(f"@{ids}")
    with pytest.raises(BoggleError, match="class ids file not found"):
        parse_class_ids(f"@{tmp_path / 'missing.txt'}")
