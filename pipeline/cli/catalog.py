"""``boggle runs``: the catalog of job directories (see :mod:`pipeline.dataset`): ls, show,
verify and query."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer

from pipeline.cli.outcome import handle_errors
from pipeline.errors import EXIT_OUTPUT_CONFLICT

JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document on stdout instead of text.")]
RunArg = Annotated[
    str, typer.Argument(metavar="RUN", help="A run, proof or search directory, or its object-store URL.")
]


class QueryFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


@handle_errors
def ls(
    root: Annotated[
        str,
        typer.Argument(
            metavar="[ROOT]",
            help="Folder or object-store prefix (s3://bucket/runs) to search; default: runs.",
        ),
    ] = "runs",
    as_json: JsonOpt = False,
) -> None:
    """List the runs, proofs and optimize searches at or below ROOT.

    One line each: kind (run, proof, search), state (finished, unfinished, damaged: the
    manifest's seal and the parts' sizes are checked, not their checksums; `boggle runs verify`
    reads every byte), date (finished, else started; UTC), boards or classes (so far, when
    unfinished), the config in a few words, size and path. Exit codes: 0 ok (damaged ones are
    listed, not errors), 2 ROOT not found.

    Example: boggle runs ls runs --json
    """
    from pipeline.cli import render
    from pipeline.dataset import find_jobs

    entries = find_jobs(root)
    if as_json:
        typer.echo(json.dumps([e.to_dict() for e in entries], ensure_ascii=False, indent=2))
        return
    for line in render.catalog_lines(entries):
        typer.echo(line)


@handle_errors
def show(run: RunArg, as_json: JsonOpt = False) -> None:
    """Show one run, proof or search: state, config, counts, parts, provenance (started,
    finished, package versions) and the command that made it, when recorded.

    Exit codes: 0 ok, 2 not a job directory, 4 its manifest or record is damaged.

    Example: boggle runs show runs/default
    """
    from pipeline.cli import render
    from pipeline.dataset import describe_job

    detail = describe_job(run)
    if as_json:
        typer.echo(json.dumps(detail, ensure_ascii=False, indent=2, default=str))
        return
    for line in render.catalog_show(detail):
        typer.echo(line)


@handle_errors
def verify(run: RunArg, as_json: JsonOpt = False) -> None:
    """Verify one run, proof or search as its readers do, every byte: the manifest's seal,
    each part's size and BLAKE2b, the side files, no stray part (an unfinished one: each
    committed part against its record).

    Prints one line, `RUN: intact (...)`, and exits 0; or a line per problem and exits 4.
    Exit 2: not a job directory.

    Example: boggle runs verify s3://bucket/runs/nightly/2026-12-03
    """
    from pipeline.cli import render
    from pipeline.dataset import verify_job

    found = verify_job(run)
    if as_json:
        typer.echo(json.dumps(found.to_dict(), ensure_ascii=False, indent=2))
    else:
        for line in render.catalog_verified(found):
            typer.echo(line, err=not found.intact)
    if not found.intact:
        raise typer.Exit(EXIT_OUTPUT_CONFLICT)


@handle_errors
def query(
    runs_and_sql: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN... SQL",
            help="Finished runs (folders or URLs), then one SQL query over the view named boards.",
        ),
    ],
    fmt: Annotated[
        QueryFormat, typer.Option("--format", help="table (aligned), csv or json (one object a line).")
    ] = QueryFormat.table,
    memory_limit: Annotated[
        str,
        typer.Option(
            "--memory-limit",
            metavar="SIZE",
            help="DuckDB's memory cap, e.g. 2GB or 512MiB (beyond it the query spills to a private "
            "temporary folder, removed afterwards).",
        ),
    ] = "2GB",
    threads: Annotated[
        int | None,
        typer.Option("--threads", min=1, help="DuckDB's threads (default: all cores)."),
    ] = None,
) -> None:
    """Run SQL (DuckDB) over the boards of finished runs, verified as every reader does; the
    runs are combined by column name into a view named boards (see docs/reference/formats.md
    for its columns). Needs the [analyze] extra.

    The query is sandboxed: one SELECT; it reads the runs' own parts and no other file, URL,
    database or extension, and writes nothing; its memory and threads are capped, and Ctrl-C or
    SIGTERM stops it at once.

    Exit codes: 0 ok, 2 bad SQL, a statement that is not a SELECT, or a run not finished, 4 a
    run is damaged.

    Example: boggle runs query runs/new runs/classic "select dice, avg(score) from boards group by dice"
    """
    from pipeline.cli import render
    from pipeline.dataset import query_runs
    from pipeline.errors import BoggleError

    if len(runs_and_sql) < 2:
        raise BoggleError("give at least one RUN, then the SQL")
    *runs, sql = runs_and_sql
    from pipeline.cli.analyzing import capped_threads

    result = query_runs(runs, sql, memory_limit=memory_limit, threads=capped_threads(threads))
    for line in render.query_output(result, fmt.value):
        typer.echo(line)
