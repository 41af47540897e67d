"""What the commands share: options passed on by name, the shared option declarations, where
report lines go, and the keys of every ``--summary-json`` record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.cli._options import RulesName, options_for, set_option, summary_json_option
from pipeline.cli._outcome import (
    ANALYZE_SUMMARY_FIELDS,
    OPTIMIZE_SUMMARY_FIELDS,
    PROVE_SUMMARY_FIELDS,
    SELECT_SUMMARY_FIELDS,
    SUMMARY_FIELDS,
    err,
    report_to,
    say,
    summary_fields,
)


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    count: int = 1
    rules: str | None = None


def test_options_for_passes_on_the_options_named_as_fields_or_parameters() -> None:
    seen: dict[str, object] = {}
    demo = typer.Typer()

    @demo.command()
    def cmd(
        ctx: typer.Context,
        name: str = "x",
        count: int = 3,
        rules: RulesName | None = None,
        quiet: bool = False,  # not a field of Target: left out
    ) -> None:
        seen["config"] = Target(**options_for(ctx, Target, count=count * 2))

        def library(name: str, *, rules: str | None = None, note: object = None) -> dict[str, object]:
            return {"name": name, "rules": rules, "note": note}

        seen["call"] = library(**options_for(ctx, library, note="n"))

    res = CliRunner().invoke(demo, ["--name", "abc", "--rules", "big", "--quiet"])
    assert res.exit_code == 0, res.output
    # the choice arrives as its plain value; `converted` replaces what the command made of it
    assert seen["config"] == Target("abc", 6, "big")
    assert seen["call"] == {"name": "abc", "rules": "big", "note": "n"}


def test_set_and_summary_json_options_say_what_they_did_before() -> None:
    run_set, optimize_set = set_option(), set_option("optimize")
    assert (run_set.metavar, run_set.help) == (
        "SECTION.KEY=VALUE",
        "Any config value as section.key=value (TOML value), repeatable.",
    )
    assert (optimize_set.metavar, optimize_set.help) == (
        "OPTIMIZE.KEY=VALUE",
        "Any [optimize] value as optimize.key=value (TOML value), repeatable.",
    )
    assert summary_json_option("the figures").help == (
        "Also write the outcome as JSON here ('-': stdout): the figures; on failure too: for schedulers."
    )


def test_report_lines_go_to_stderr_when_stdout_holds_the_record() -> None:
    assert report_to(None) is say and report_to(Path("s.json")) is say
    assert report_to("-") is err and report_to(Path("-")) is err
    assert report_to(None, typer.echo) is typer.echo


@pytest.mark.parametrize(
    "fields",
    [
        SUMMARY_FIELDS,
        PROVE_SUMMARY_FIELDS,
        OPTIMIZE_SUMMARY_FIELDS,
        ANALYZE_SUMMARY_FIELDS,
        SELECT_SUMMARY_FIELDS,
    ],
)
def test_every_record_starts_with_its_outcome_and_ends_with_when(fields: tuple[str, ...]) -> None:
    assert fields[:4] == ("command", "status", "exit_code", "message")
    assert fields[-4:] == ("started_at", "finished_at", "elapsed_s", "version")
    assert len(set(fields)) == len(fields)
    assert summary_fields(*fields[4:-4]) == fields


def test_the_records_keep_their_keys_in_order() -> None:
    """The keys schedulers read, in the order the records have always had."""
    assert OPTIMIZE_SUMMARY_FIELDS == (
        "command",
        "status",
        "exit_code",
        "message",
        "boards",
        "best_board",
        "best_score",
        "run_dir",
        "started_at",
        "finished_at",
        "elapsed_s",
        "version",
    )


def test_commands_that_pass_options_on_take_the_context_hidden() -> None:
    """``ctx`` is no option: ``--help`` and the reference never show it."""
    root = typer.main.get_command(app)
    ctx = typer.Context(root, info_name="boggle")
    for name in ("prove", "optimize", "design-dice", "what-if"):
        command = root.get_command(ctx, name)  # type: ignore[attr-defined]
        names = [p.name for p in command.params]
        assert "ctx" not in names and {"out", "overwrite"} <= set(names), (name, names)


def test_run_fills_in_placeholders_before_anything_else(tmp_path: Path) -> None:
    import datetime
    import json

    from pipeline.cli._batch import fill_placeholders

    when, out, summary, refused = fill_placeholders(
        None, "runs/{date}", Path("s-{date}.json"), None, "2026-12-01", seeded=False
    )
    assert (when, out, summary, refused) == (
        datetime.date(2026, 12, 1),
        "runs/2026-12-01",
        Path("s-2026-12-01.json"),
        None,
    )
    # a refused date: its record is still written where the name needs no date...
    plain = tmp_path / "s.json"
    res = CliRunner().invoke(
        app, ["run", "--date", "2026-02-30", "--out", str(tmp_path / "r"), "--summary-json", str(plain)]
    )
    assert res.exit_code == 2
    record = json.loads(plain.read_text(encoding="utf-8"))
    assert record["exit_code"] == 2 and "--date" in record["message"]
    # ...and nowhere when the name itself needed it
    dated = tmp_path / "d" / "{date}.json"
    dated.parent.mkdir()
    res = CliRunner().invoke(
        app, ["run", "--date", "2026-02-30", "--out", str(tmp_path / "r"), "--summary-json", str(dated)]
    )
    assert res.exit_code == 2 and list(dated.parent.iterdir()) == []
    assert not (tmp_path / "r").exists()
