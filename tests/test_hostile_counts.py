"""Issue 54, counts: every integer option of the command line has a cap, checked before the
command runs (so before anything is allocated, read or written), and a value past it, an integer
that overflows any machine type included, is one line and exit 2. The options are listed from
the CLI itself (every command's signature), so a new integer option without a cap fails here.

The commands run in a subprocess under the suite's 1.5 GB address-space limit: one that
allocates before refusing (``design-dice --batch 1000000000000`` asked for 116 TiB) dies there.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from pipeline.cli._options import int_caps, option_name
from pipeline.config import MAX_COUNT
from pipeline.design import MAX_BATCH, MAX_BUDGET, MAX_VALIDATE, DesignConfig, parse_budget
from pipeline.errors import ConfigError
from tests.conftest import base_type, cli_commands, run_boggle
from tests.test_limits_input import cli_in_subprocess, limited

#: The arguments a command needs before its options are parsed at all (never read: the caps
#: are checked first). A new command with a required argument must be added here, or its
#: options fail the test below (the parser's "Missing argument" names no cap).
REQUIRED: dict[str, list[str]] = {
    "lookup": ["word"],
    "analyze": ["nowhere"],
    "select": ["nowhere", "--out", "pool.parquet"],
    "digest": ["nowhere"],
    "what-if": ["new"],
    "dice show": ["new"],
    "runs show": ["nowhere"],
    "runs verify": ["nowhere"],
    "runs query": ["nowhere", "select 1"],
}
HUGE = 10**50  # past every cap and int64 (select --limit 10**23 overflowed into exit 1), 2**128 too


def integer_options() -> list[tuple[str, str, str, list[str]]]:
    """(command, its function's name, parameter, its flags: empty for an argument) of every
    integer option and argument of the command line."""
    found = []
    for command, function, fn in cli_commands():
        hints = typing.get_type_hints(fn, include_extras=True)
        for name, hint in hints.items():
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            kind, info = typing.get_args(hint)[:2]
            if base_type(kind) is not int:
                continue
            flags = [
                d for d in (getattr(info, "default", None), *(getattr(info, "param_decls", None) or ())) if d
            ]
            flags = [f for f in flags if isinstance(f, str) and f.startswith("-")]
            found.append((command, function, name, flags))
    return found


OPTIONS = integer_options()


def test_the_cli_has_the_integer_options_this_issue_is_about() -> None:
    listed = {(c, n) for c, _, n, _ in OPTIONS}
    for wanted in (
        ("design-dice", "batch"),
        ("design-dice", "validate"),
        ("design-dice", "max_batches"),
        ("select", "limit"),
        ("prove", "chunk_size"),
        ("what-if", "count"),
        ("queens", "n"),
    ):
        assert wanted in listed
    assert len(OPTIONS) > 40


def test_every_integer_option_has_a_cap_and_its_message_names_it() -> None:
    caps = int_caps()
    for command, function, name, flags in OPTIONS:
        cap = caps.get(f"{function}.{name}", caps.get(name))
        assert cap is not None, (
            f"boggle {command} {option_name(name)}: no cap in pipeline.cli._options.int_caps"
        )
        assert 1 <= cap < 2**129
        if flags:  # the refusal names the option as typed
            assert option_name(name) in flags, (command, name, flags)


def _refusals() -> list[tuple[list[str], str, str]]:
    """(command line, the option as named, the bound said) for every integer option: one past
    its cap, and far past any integer type, either sign."""
    caps = int_caps()
    out = []
    for command, function, name, flags in OPTIONS:
        cap = caps.get(f"{function}.{name}", caps.get(name))
        assert cap is not None
        given = REQUIRED.get(command, [])
        for value in (cap + 1, HUGE, -HUGE):
            if value < 0 and not flags:
                continue  # an argument's "-1e25" is an option to the parser; its min refuses it
            args = [*command.split(), *given]
            args += [flags[0], str(value)] if flags else [str(value)]
            bound = f"at most {cap:,}" if value > 0 else f"at least {-cap:,}"
            out.append((args, option_name(name), bound))
    return out


def test_every_integer_option_past_its_cap_is_one_line_exit_2_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # anything written would land here
    refusals = _refusals()
    results = cli_in_subprocess(*(args for args, _, _ in refusals))
    for (args, option, bound), (code, stdout, stderr) in zip(refusals, results, strict=True):
        shown = " ".join(args)
        if code == 2 and "Invalid value" in stderr and args[-1].startswith("-"):
            continue  # below the option's own minimum: the parser refuses it first, as before
        assert code == 2 and stdout == "", (shown, code, stdout[:300], stderr)
        assert stderr.count("\n") == 1 and stderr.startswith(f"error: {option}: {bound}, got "), (
            shown,
            stderr,
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.integration  # real processes, the real entry point
def test_the_issues_counts_as_commands(tmp_path: Path) -> None:
    """What the issue ran, through the real entry point (one line, not the parser's usage block),
    under the memory limit: nothing allocated, nothing written."""
    cases = [
        (["design-dice", "--batch", "1000000000000"], f"error: --batch: at most {MAX_BATCH:,}, got"),
        (["design-dice", "--budget", "1e15"], f"--budget '1e15': at most {MAX_BUDGET:,} boards"),
        (["design-dice", "--budget", "9" * 400], "(400 characters): expected a number of boards"),
        (["design-dice", "--validate", "1000000000000000"], f"error: --validate: at most {MAX_VALIDATE:,}"),
        (["design-dice", "--validate", "1e15"], "error: Invalid value for '--validate'"),
        (["select", "nowhere", "--limit", "99999999999999999999999", "-o", "p.parquet"], "--limit: at most"),
        (["prove", "--class-ids", "99999999999999999999999999"], "is beyond the largest class id"),
        (["queens", "99999999999999999999"], "error: N: at most 32"),
    ]
    for args, needle in cases:
        out = tmp_path / "out"
        extra = ["--out", str(out)] if args[0] in ("design-dice", "prove") else []
        proc = limited(["-m", "pipeline.cli", *args, *extra], timeout=120)
        assert proc.returncode == 2 and "MemoryError" not in proc.stderr, (args, proc.stderr[-2000:])
        assert proc.stdout == "" and proc.stderr.count("\n") == 1 and needle in proc.stderr, (
            args,
            proc.stderr,
        )
        assert not out.exists()


def test_the_caps_import_no_kernel() -> None:
    """The caps are checked before every command, ``boggle prove`` included, which chooses its
    kernels (built ahead of time, or numba's JIT) at the first kernel module imported: checking
    a cap must import none, or prove would never take the built ones."""
    code = (
        "import sys\n"
        "from pipeline.cli._options import check_int_options\n"
        "check_int_options('prove', {'chunk_size': 64, 'n_jobs': -1})\n"
        "from pipeline import jit\n"
        "print(jit._mode, 'numba' in sys.modules)\n"
    )
    proc = limited(["-c", code], timeout=120)
    assert proc.stdout.split() == ["None", "False"], proc.stderr[-2000:]


def test_design_caps_hold_for_the_library_too() -> None:
    with pytest.raises(ConfigError, match="--batch: at most 1,000,000"):
        DesignConfig("new", "mean", "enable2k", "out", batch=10**12)
    with pytest.raises(ConfigError, match="--validate: at most 10,000,000"):
        DesignConfig("new", "mean", "enable2k", "out", validate=10**15)
    with pytest.raises(ConfigError, match="--max-batches: at most 1,000"):
        DesignConfig("new", "mean", "enable2k", "out", max_batches=10**6)
    with pytest.raises(ConfigError, match="--budget: at most"):
        DesignConfig("new", "mean", "enable2k", "out", budget=10**15)
    assert parse_budget("2.5M") == 2_500_000 and parse_budget("1e6") == 1_000_000
    with pytest.raises(ConfigError, match="expected a number of boards"):
        parse_budget("1e1000000")


def test_a_batch_of_big_boards_is_capped_in_cells(tmp_path: Path, enable2k_path: str) -> None:
    """A 10x10 dice set: a batch of a million boards is 100M cells of draws, refused before
    any is rolled (its cap in boards alone would let it through)."""
    dice = tmp_path / "big.txt"
    dice.write_text("a b c d e f\n" * 100)
    res = run_boggle(
        "design-dice",
        "--start",
        str(dice),
        "--batch",
        "1000000",
        "-d",
        enable2k_path,
        "--out",
        str(tmp_path / "o"),
    )
    assert res.returncode == 2, res.stderr[-2000:]
    assert "--batch: 1,000,000 boards of 100 cells are 100,000,000 cells a batch" in res.stderr
    assert not (tmp_path / "o").exists()


def test_select_limit_as_large_as_a_count_still_runs(smoke_run: Path, tmp_path: Path) -> None:
    res = run_boggle("select", str(smoke_run), "--limit", str(MAX_COUNT), "-o", str(tmp_path / "p.parquet"))
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "p.parquet").is_file()
