"""``boggle runs``: the catalog of job directories (see :mod:`pipeline.store.dataset`): ls, show,
verify and query."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer

from pipeline.cli._outcome import handle_errors
from pipeline.errors import EXIT_OUTPUT_CONFLICT

JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document on stdout instead of text.")]
RunArg = Annotated[
    str, typer.Argument(metavar="RUN", help="A run, proof or search directory, or its object-store URL.")
]
RunsArg = Annotated[
    list[str],
    typer.Argument(
        metavar="RUN...",
        help="Run, proof or search folders (or URLs), folders holding them (every job below), or globs.",
    ),
]


class QueryFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


@handle_errors
def ls(
    roots: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ROOT]...",
            help="Folders or object-store prefixes (s3://bucket/runs) to search, or globs of them "
            "('runs/nightly/2026-12-*'); default: runs.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the runs, proofs and optimize searches at or below each ROOT.

    One line each: kind (run, proof, search), state (finished, unfinished, damaged: the
    manifest's seal and the parts' sizes are checked, not their checksums; `boggle runs verify`
    reads every byte), date (finished, else started; UTC), boards or classes (so far, when
    unfinished), the config in a few words, size and path. Exit codes: 0 ok (damaged ones are
    listed, not errors), 2 ROOT not found (or a glob that matches nothing).

    Example: boggle runs ls runs/nightly --json
    """
    from pipeline.cli import render
    from pipeline.store.dataset import find_jobs

    entries = find_jobs(roots or ["runs"])
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
    from pipeline.store.dataset import describe_job

    detail = describe_job(run)
    if as_json:
        typer.echo(json.dumps(detail, ensure_ascii=False, indent=2, default=str))
        return
    for line in render.catalog_show(detail):
        typer.echo(line)


@handle_errors
def verify(runs: RunsArg, as_json: JsonOpt = False) -> None:
    """Verify runs, proofs or searches as their readers do, every byte: the manifest's seal,
    each part's size and BLAKE2b, the side files, no stray part (an unfinished one: each
    committed part against its record). Each RUN is a job folder, a folder of them (every job
    below it) or a glob.

    Prints one line a job, `RUN: intact (...)`, and exits 0; or a line per problem (on stderr)
    and exits 4. Exit 2: no job there.

    Example: boggle runs verify s3://bucket/runs/nightly
    """
    from pipeline.cli import render
    from pipeline.store.dataset import verify_jobs

    found = verify_jobs(runs)
    if as_json:
        docs = [v.to_dict() for v in found]
        typer.echo(json.dumps(docs[0] if len(docs) == 1 else docs, ensure_ascii=False, indent=2))
    else:
        for one in found:
            for line in render.catalog_verified(one):
                typer.echo(line, err=not one.intact)
    if not all(v.intact for v in found):
        raise typer.Exit(EXIT_OUTPUT_CONFLICT)


@handle_errors
def query(
    runs_and_sql: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN... SQL",
            help="Finished runs (folders or URLs, folders of runs, or globs), then one SQL query "
            "over the view named boards.",
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
    for its columns) with a column run (the run's folder) added. A RUN may be a folder of runs
    (every finished run below it: runs/nightly) or a glob; an unfinished run found below a
    folder is left out with a note. Needs the [analyze] extra.

    The query is sandboxed: one SELECT; it reads the runs' own parts and no other file, URL,
    database or extension, and writes nothing; its memory and threads are capped (beyond
    --memory-limit it spills to a private temporary folder, removed afterwards), and Ctrl-C or
    SIGTERM stops it at once.

    Exit codes: 0 ok, 2 bad SQL (or refused, or over the memory limit), a run not finished,
    4 a run is damaged, 130/143 interrupted.

    Example: boggle runs query runs/nightly "select run_date, avg(score) from boards group by 1 order by 1"
    """
    from pipeline.cli import render
    from pipeline.cli._analyzing import capped_threads
    from pipeline.cli._outcome import note
    from pipeline.errors import BoggleError
    from pipeline.store.dataset import query_runs

    if len(runs_and_sql) < 2:
        raise BoggleError("give at least one RUN, then the SQL")
    *runs, sql = runs_and_sql
    result = query_runs(runs, sql, memory_limit=memory_limit, threads=capped_threads(threads))
    for line in result.notes:
        note(line)
    for line in render.query_output(result, fmt.value):
        typer.echo(line)
