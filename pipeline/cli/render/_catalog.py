"""What the catalog commands show: the ``runs`` table, one entry's details, a verification's
verdict and a query's rows, as aligned text or JSON lines.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pipeline.cli.render._log import plural

if TYPE_CHECKING:  # the results each display shows (imported by the commands that make them)
    from pipeline.store.dataset import CatalogEntry, QueryResult, Verification


# ------------------------------------------------------------------ runs (the catalog)


def size_text(n: int) -> str:
    """``812 B``, ``4.1 kB``, ``221.0 MB``, ``1.3 GB`` (powers of 1,000)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _aligned(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(
            (c.rjust(w) if i in right else c.ljust(w)) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, *rows]
    ]


def catalog_lines(entries: list[CatalogEntry]) -> list[str]:
    """``boggle runs ls``: one aligned line a job directory (kind, state, date, count, config,
    size, path), and what is wrong with each damaged one."""
    if not entries:
        return ["no run, proof or search here"]
    rows = []
    for e in entries:
        count = f"{e.count:,} {e.unit}" if e.count is not None else "-"
        date = (e.date or "-")[:19].replace("T", " ")
        rows.append([e.kind, e.state, date, count, e.config or "-", size_text(e.bytes), e.path])
    lines = _aligned(["KIND", "STATE", "DATE", "COUNT", "CONFIG", "SIZE", "PATH"], rows, {3, 5})
    lines += [f"{e.path}: {e.problem}" for e in entries if e.problem]
    return lines


def catalog_show(d: dict[str, Any]) -> list[str]:
    """``boggle runs show``: a job directory in a few lines (see
    :func:`pipeline.store.dataset.describe_job`)."""
    count = f"{d['count']:,} {d['unit']}" if d["count"] is not None else "-"
    lines = [
        f"{d['path']}: {d['state']} {d['kind']} ({d['format']}, schema {d['schema_version']})",
        f"config: {d['config']}",
        f"count: {count}",
        f"started: {d['started_at'] or '-'}; finished: {d['finished_at'] or '-'}",
    ]
    parts = d["parts"]
    unrecorded = f", {parts['without_record']} without a record" if parts.get("without_record") else ""
    lines.append(
        f"parts: {plural(parts['files'], 'file')}, {parts['rows']:,} rows, {size_text(parts['bytes'])}"
        f"{unrecorded}; {size_text(d['bytes'])} in all"
    )
    if d["problem"]:
        lines.append(f"problem: {d['problem']}")
    packages = d.get("packages") or {}
    if packages:
        lines.append("packages: " + ", ".join(f"{k} {v}" for k, v in sorted(packages.items())))
    lines.append(f"command: {d['command'] or 'not recorded'}")
    for key, value in d["figures"].items():
        if isinstance(value, dict | list):
            value = json.dumps(value, ensure_ascii=False, default=str)
            value = value if len(value) <= 160 else value[:157] + "..."
        lines.append(f"{key}: {value}")
    full = json.dumps(d["config_full"], ensure_ascii=False, sort_keys=True, default=str)
    lines.append(f"config (full): {full}")
    return lines


def catalog_verified(v: Verification) -> list[str]:
    """``boggle runs verify``: ``intact`` in one line, or each problem found."""
    if v.intact:
        return [f"{v.path}: intact ({v.state} {v.kind}, {plural(v.parts, 'part')} verified)"]
    return [f"{v.path}: {name}: {why}" for name, why in v.problems]


def query_output(result: QueryResult, fmt: str) -> list[str]:
    """``boggle runs query``'s rows: an aligned ``table``, ``csv`` (with a header) or ``json``
    (one object a line)."""
    if fmt == "json":
        return [
            json.dumps(dict(zip(result.columns, row, strict=True)), ensure_ascii=False, default=str)
            for row in result.rows
        ]
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buf.getvalue().splitlines()

    def cell(value: Any) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, float):
            return f"{value:.6g}"
        return str(value)

    rows = [[cell(v) for v in row] for row in result.rows]
    numeric = {
        i
        for i in range(len(result.columns))
        if result.rows and all(isinstance(row[i], int | float) for row in result.rows if row[i] is not None)
    }
    return [*_aligned(list(result.columns), rows, numeric), f"({plural(len(rows), 'row')})"]
