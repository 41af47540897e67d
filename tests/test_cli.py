"""The CLI in-process (typer's CliRunner): exit codes, output, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def test_solve_golden_board(enable2k_path: str) -> None:
    res = run("solve", "perslatgsineters", "--dictionary", enable2k_path)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "Board perslatgsineters (4x4)"
    assert lines[1:5] == ["p e r s", "l a t g", "s i n e", "t e r s"]
    assert "Found 1045 words" in lines
    assert "Total score: 3625" in lines
    assert "repaints 11" in lines


def test_solve_json(enable2k_path: str, tmp_path: Path) -> None:
    boards = tmp_path / "boards.txt"
    boards.write_text("perslatgsineters\nqiet\n")
    res = run("solve", "--file", str(boards), "--dictionary", enable2k_path, "--json")
    assert res.exit_code == 0, res.output
    objs = [json.loads(line) for line in res.stdout.splitlines()]
    assert [o["board"] for o in objs] == ["perslatgsineters", "[qu]iet"]  # one notation out
    first = objs[0]
    assert (first["rows"], first["cols"], first["score"], first["n_words"]) == (4, 4, 3625, 1045)
    assert first["words"] == sorted(first["words"]) and len(first["words"]) == 1045
    assert "quite" in objs[1]["words"]


def test_solve_non_square_and_grid_file(enable2k_path: str, tmp_path: Path) -> None:
    res = run("solve", "catsx", "--shape", "1x5", "--dictionary", enable2k_path, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["words"] == ["cat", "cats"]
    grid = tmp_path / "grid.txt"
    grid.write_text("c a\n. t\n")
    res = run("solve", "--file", str(grid), "--dictionary", enable2k_path, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["words"] == ["act", "cat"]


def test_solve_revisit_and_min_length(tmp_path: Path) -> None:
    words = tmp_path / "w.txt"
    words.write_text("tat\ntata\nat\n")
    res = run("solve", "taxx", "--dictionary", str(words), "--json")
    assert json.loads(res.stdout)["words"] == []
    res = run("solve", "taxx", "--dictionary", str(words), "--json", "--revisit", "--min-length", "2")
    assert json.loads(res.stdout)["words"] == ["at", "tat", "tata"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "abc"], "board argument 1: board 'abc' has 3 faces, not a square number"),
        (["solve", "ab1d"], "board argument 1: position 3: unknown face '1'"),
        (["solve", "abcde", "--shape", "2x2"], "expected 4 for 2x2"),
        (
            ["solve", "--file", "/nonexistent/boards.txt"],
            "board file not found: /nonexistent/boards.txt",
        ),
        (["solve"], "no boards given"),
    ],
)
def test_bad_boards_give_one_line_and_exit_2(enable2k_path: str, args: list[str], message: str) -> None:
    res = run(*args, "--dictionary", enable2k_path)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_unknown_choice_is_a_usage_error_listing_the_choices() -> None:
    res = run("solve", "abcd", "--rules", "giant")
    assert res.exit_code == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert "'giant' is not one of 'boggle', 'big', 'superbig'" in res.stderr


def test_bad_lexicons_give_one_line_and_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\x7fELF\x00\x01\x02")
    for path, message in [
        (empty, "no words"),
        (binary, "binary data"),
        (tmp_path / "missing.txt", "dictionary file not found"),
    ]:
        res = run("solve", "abcd", "--dictionary", str(path))
        assert res.exit_code == 2, res.output
        assert message in res.stderr and res.stderr.count("\n") == 1


def test_bad_board_in_file_names_file_and_line(enable2k_path: str, tmp_path: Path) -> None:
    boards = tmp_path / "b.txt"
    boards.write_text("abcd\nefgh\nab?d\n")
    res = run("solve", "--file", str(boards), "--dictionary", enable2k_path)
    assert res.exit_code == 2
    assert f"{boards}:3: position 3: unknown face '?'" in res.stderr


def test_lookup(enable2k_path: str) -> None:
    res = run("lookup", "quit", "qu", "qat", "perslatgsineters", "--dictionary", enable2k_path)
    assert res.exit_code == 0
    assert res.stdout.splitlines() == [
        "quit word",
        "qu prefix",
        "qat neither",
        "perslatgsineters neither",
    ]


def test_every_command_has_help_with_an_example() -> None:
    import typer.main

    group = typer.main.get_group(app)
    assert group.commands, "no commands registered"
    names = [[name] for name in group.commands]
    names += [[name, sub] for name, cmd in group.commands.items() for sub in getattr(cmd, "commands", {})]
    for name in names:
        res = run(*name, "--help")
        assert res.exit_code == 0, name
        assert "Example:" in res.stdout, f"`boggle {' '.join(name)} --help` has no example"


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from pipeline.cli import app; "
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0; "
        "heavy = ('numpy', 'numba', 'pyarrow', 'pandas', 'duckdb', 'matplotlib', 'joblib'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_kernel_cache_detection(tmp_path: Path) -> None:
    from pipeline.solve import kernel_needs_compile

    assert kernel_needs_compile([tmp_path])
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "_drive.solve_batch-123.py311.nbi").write_bytes(b"")
    assert not kernel_needs_compile([tmp_path])


@pytest.mark.parametrize("algorithm", ["trie", "dp", "binary"])
def test_every_kernel_module_the_commands_ask_about_exists(tmp_path: Path, algorithm: str) -> None:
    # a name that is no module would never find its cache: the compile note on every run, and
    # a warm run's main process importing numba (it did, for "summary", once the module was
    # renamed _summary)
    from pipeline.errors import InternalError
    from pipeline.solve import kernel_needs_compile
    from pipeline.solve._algorithms import SolveJob

    module = SolveJob(boards=[], rules=None, lexicon=None, algorithm=algorithm).kernel_module  # type: ignore[arg-type]
    assert kernel_needs_compile([tmp_path], module=module)
    assert kernel_needs_compile([tmp_path], module="_summary")  # the runner's warm-up asks
    with pytest.raises(InternalError, match="no module 'summary'"):
        kernel_needs_compile([tmp_path], module="summary")


def test_first_run_says_once_that_it_compiles(enable2k_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.solve

    monkeypatch.setattr(pipeline.solve, "kernel_needs_compile", lambda module: True)
    res = run("solve", "abcd", "efgh", "--dictionary", enable2k_path)
    assert res.exit_code == 0
    assert res.stderr.count("compiling the solver kernel") == 1


def test_words_prunes_by_length_and_dice(tmp_path: Path) -> None:
    words = tmp_path / "w.txt"
    words.write_text("then\nthe\nqat\nquit\ntee\nteeth\nhex\n")
    res = run("words", "--dictionary", str(words), "--max-length", "4")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["hex", "quit", "tee", "the", "then"]
    # superbig dice show Th and He faces: "the" is listed once however many spellings it has
    res = run("words", "--dictionary", str(words), "--dice", "superbig")
    assert res.stdout.splitlines() == ["hex", "quit", "tee", "teeth", "the", "then"]


def test_a_word_list_compiled_from_scratch_is_announced_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.lexicon._compile as compiling  # ANNOUNCE_BYTES, patched

    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compiling, "ANNOUNCE_BYTES", 0)  # as for a big list
    words = tmp_path / "words.txt"
    words.write_text("tea\neat\nate\n", encoding="utf-8")
    first = run("solve", "teat", "--dictionary", str(words))
    assert first.exit_code == 0, first.stderr
    assert first.stderr.count("note: compiling the word list words.txt") == 1
    again = run("solve", "teat", "--dictionary", str(words))
    assert again.exit_code == 0 and "compiling the word list" not in again.stderr
