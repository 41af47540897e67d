"""Issue 54, parsing: what a user types or hands over is bad input (exit 2, one line), never an
internal error (exit 1) or another job (exit 4): dice files nested thousands deep, in every
command that reads dice; a published digest that is malformed, or right but in upper case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.errors import ConfigError
from pipeline.store import parse_digest
from tests.conftest import ALPHA, REPO, one_error_line, run_boggle, write_run
from tests.test_limits_input import cli_in_subprocess

SMOKE = str(REPO / "configs" / "smoke.toml")


def deep_dice(tmp_path: Path) -> list[Path]:
    """A 5,000-deep TOML and a 100,000-deep JSON dice file (RecursionError in the parsers)."""
    toml = tmp_path / "deep.toml"
    toml.write_text("dice = " + "[" * 5000 + "]" * 5000 + "\n")
    js = tmp_path / "deep.json"
    js.write_text('{"dice": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return [toml, js]


#: Every command that reads dice, {D} the dice file and {OUT} an output folder.
READS_DICE = [
    ["dice", "show", "{D}"],
    ["run", SMOKE, "--dice", "{D}", "-o", "{OUT}", "-q"],
    ["what-if", "{D}", "-o", "{OUT}", "-q"],
    ["what-if", "new", "--dice-b", "{D}", "-o", "{OUT}", "-q"],
    ["design-dice", "--start", "{D}", "-o", "{OUT}", "-q"],
    ["words", "--dice", "{D}"],
    ["generate", "--dice", "{D}"],
    ["optimize", "--dice", "{D}", "-o", "{OUT}", "-q"],
]


def test_deeply_nested_dice_files_are_bad_input_in_every_command(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cases = [
        (dice, [a.replace("{D}", str(dice)).replace("{OUT}", str(out)) for a in args])
        for dice in deep_dice(tmp_path)
        for args in READS_DICE
    ]
    for (dice, args), (code, stdout, stderr) in zip(
        cases, cli_in_subprocess(*(a for _, a in cases)), strict=True
    ):
        kind = dice.suffix[1:].upper()
        assert code == 2 and stdout == "", (args, code, stderr)
        assert stderr == f"error: {dice}: not valid {kind}: arrays or tables nested too deeply\n", (
            args,
            stderr,
        )
    assert not out.exists()


def test_a_deep_dice_file_as_a_command(tmp_path: Path) -> None:
    for dice in deep_dice(tmp_path):
        res = run_boggle("dice", "show", str(dice))
        assert res.returncode == 2, res.stderr[-2000:]
        one_error_line(res, "nested too deeply")


def test_a_deeply_nested_manifest_is_a_damaged_job(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", ALPHA)
    (run / "_SUCCESS").write_text("[" * 100_000 + "]" * 100_000)
    res = run_boggle("digest", str(run))
    assert res.returncode == 4, res.stderr[-2000:]
    one_error_line(res, "_SUCCESS: unreadable manifest")


# ---------------------------------------------------------------- published digests


def test_a_digest_is_parsed_whatever_its_case() -> None:
    hexes = "ab" * 32
    for text in (hexes, f"blake2b-256:{hexes}", hexes.upper(), f"BLAKE2B-256:{hexes.upper()}", f" {hexes}\n"):
        assert parse_digest(text) == f"blake2b-256:{hexes}"
    for text in (
        "",
        "blake2b-256:",
        "ab" * 31,
        "ab" * 33,
        "zz" * 32,
        f"sha256:{hexes}",
        f"blake2b-256:{hexes}x",
    ):
        with pytest.raises(ConfigError, match="not a digest"):
            parse_digest(text)


def test_digest_expect_takes_any_case_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", ALPHA)
    res = run_boggle("digest", str(run))
    assert res.returncode == 0, res.stderr
    digest = res.stdout.split()[0]
    for given in (digest, digest.upper(), digest.split(":", 1)[1].upper()):
        ok = run_boggle("digest", str(run), "--expect", given)
        assert ok.returncode == 0 and ok.stdout == res.stdout, (given, ok.stderr)
    for bad in ("blake2b-256:xyz", digest[:-1], digest + "0", "not-a-digest"):
        refused = run_boggle("digest", str(run), "--expect", bad)
        assert refused.returncode == 2 and refused.stdout == "", (bad, refused.stderr)
        one_error_line(refused, "--expect", "not a digest")
    other = "blake2b-256:" + "0" * 64  # well formed, another job's: exit 4 as before
    res = run_boggle("digest", str(run), "--expect", other)
    assert res.returncode == 4
    one_error_line(res, "not the one expected")
    res = run_boggle(
        "analyze", str(run), "--expect-digest", "blake2b-256:xyz", "--out", str(tmp_path / "rep")
    )
    assert res.returncode == 2
    one_error_line(res, "--expect-digest", "not a digest")
    assert not (tmp_path / "rep").exists()


def test_digests_one_per_job_in_order_in_both_commands_that_take_them(tmp_path: Path) -> None:
    """`digest --expect` and `analyze --expect-digest` take one digest per job, in order: a count
    that does not match, or a malformed digest after a good one, is bad input (exit 2) before
    any job is read, named by the flag; the right digests, in order, pass."""
    runs = [write_run(tmp_path / name, ALPHA[:n]) for name, n in (("a", 3), ("b", 5))]
    res = run_boggle("digest", *map(str, runs))
    assert res.returncode == 0, res.stderr
    good = [line.split()[0] for line in res.stdout.splitlines()]
    assert len(set(good)) == 2
    rep = tmp_path / "rep"
    for flag, command in (("--expect", ["digest"]), ("--expect-digest", ["analyze", "--out", str(rep)])):
        for given, why in (
            (good[:1], f"{flag}: 1 digest for 2 "),
            ([*good, good[0]], f"{flag}: 3 digests for 2 "),
            ([good[0], "blake2b-256:xyz"], "not a digest"),
        ):
            pins = [a for d in given for a in (flag, d)]
            refused = run_boggle(*command, *map(str, runs), *pins)
            assert refused.returncode == 2 and refused.stdout == "", (flag, given, refused.stderr)
            one_error_line(refused, flag, why)
        assert not rep.exists()
        swapped = run_boggle(*command, *map(str, runs), flag, good[1], flag, good[0])
        assert swapped.returncode == 4, swapped.stderr  # each job against its own: in order
        one_error_line(swapped, "not the one expected")
    ok = run_boggle(
        "analyze", *map(str, runs), "--out", str(rep), "--expect-digest", good[0], "--expect-digest", good[1]
    )
    assert ok.returncode == 0, ok.stderr


def test_a_digest_in_upper_case_reads_the_run(tmp_path: Path) -> None:
    from pipeline.store import job_digest, open_run, read_manifest

    run = write_run(tmp_path / "run", ALPHA)
    digest = job_digest(read_manifest(run))
    assert open_run(run, expect_digest=digest.upper()).manifest["counts"]["boards"] == len(ALPHA)
    with pytest.raises(ConfigError, match="not a digest"):
        open_run(run, expect_digest=json.dumps(digest))
