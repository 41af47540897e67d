"""The sealed manifest (``_SUCCESS``, and every other JSON file a job seals: its record, a
search's state) and the one verdict on a finished job: every part and side file checked
against it (:func:`job_problems`), and the job's published digest."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline.errors import DamagedRunError
from pipeline.store._kind import PROOF, part_tag
from pipeline.store._location import Location, UnpackError, location
from pipeline.store._parts import (
    PartInfo,
    committed_chunks,
    is_digest,
    part_name,
    part_problem,
    stats_entry,
    stats_problem,
    totals_entry,
)
from pipeline.store._schema import FORMAT, MANIFEST

#: What a job's digest starts with (:func:`job_digest`); 64 hex digits follow.
DIGEST_PREFIX = "blake2b-256:"
_DIGEST_HEX = re.compile(r"[0-9a-f]{64}")

# ---------------------------------------------------------------- sealed manifests

SEAL = "seal"  # the manifest's checksum of its own content (every other key)
#: A reader's own check of one listed part that is present (its record, the job's part tag):
#: what is wrong with it, None when nothing is (see :func:`finished_problems`).
PartReader = Callable[[PartInfo, "str | None"], "str | None"]


def seal_of(manifest: Mapping[str, Any]) -> str:
    """BLAKE2b of the manifest's content without its seal, in a canonical JSON form (so the
    seal does not depend on how the file was indented)."""
    body = {k: v for k, v in manifest.items() if k != SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def read_manifest(where: Path | str | Location, name: str = MANIFEST) -> dict[str, Any]:
    """The sealed JSON file ``name`` (the manifest, the run record, a job's state) of the job
    directory ``where``, whose seal matches its content; a DamagedRunError naming the file
    otherwise (unreadable, not JSON, or changed since it was written)."""
    loc = location(where)
    path = loc.url(name)
    try:
        data = json.loads(loc.read_bytes(name).decode("utf-8"))
    except UnpackError as exc:
        raise DamagedRunError(f"{path}: unreadable manifest ({exc.why})") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise DamagedRunError(f"{path}: unreadable manifest (not valid JSON)") from None
    except OSError as exc:
        raise DamagedRunError(f"{path}: cannot read the manifest: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise DamagedRunError(f"{path}: unreadable manifest (not a JSON object)")
    if not isinstance(data.get(SEAL), str):
        # every writer seals what it writes: a missing or null seal is damage, never an old format
        raise DamagedRunError(f"{path}: the manifest has no seal (its checksum); refused as damaged")
    if data[SEAL] != seal_of(data):
        raise DamagedRunError(f"{path}: the manifest was changed after it was written (its seal differs)")
    return data


def file_entry(where: Path | str | Location, name: str) -> dict[str, Any]:
    """The manifest's entry for the file ``name`` of the job directory ``where``: its size and
    BLAKE2b."""
    loc = location(where)
    return {"bytes": loc.size(name), "blake2b": loc.blake2b(name)}


def listed_parts(manifest: Mapping[str, Any], where: Path | str | Location) -> dict[int, PartInfo]:
    """The manifest's parts by chunk, each name checked to be the chunk's own part file in the
    job directory itself (a manifest never points outside it)."""
    out: dict[int, PartInfo] = {}
    try:
        for p in manifest.get("parts", []):
            chunk = int(p["chunk"])
            if p.get("file") != part_name(chunk) or chunk < 0:
                raise DamagedRunError(
                    f"{where}: the manifest lists {str(p.get('file'))[:80]!r} for chunk {chunk}; "
                    "part files must be the job directory's own part-NNNNN.parquet"
                )
            digest = p.get("blake2b")
            if not is_digest(digest):
                raise DamagedRunError(
                    f"{where}: the manifest's entry for {p.get('file')} has no checksum; refused as damaged"
                )
            if chunk in out:
                raise DamagedRunError(f"{where}: the manifest lists chunk {chunk} twice")
            out[chunk] = PartInfo(
                chunk=chunk,
                rows=int(p["rows"]),
                bytes=int(p["bytes"]),
                blake2b=digest,
                stats=stats_entry(p.get("stats")),
                totals=totals_entry(p.get("totals")),
            )
    except (KeyError, TypeError, ValueError):
        raise DamagedRunError(f"{where}: the manifest's parts list is malformed") from None
    return out


def side_file_problems(job_dir: Path | Location, manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(file, problem) for each side file the manifest lists (rejects, boards table) that is
    missing or differs from its recorded size and checksum."""
    loc = location(job_dir)
    out: list[tuple[str, str]] = []
    files = manifest.get("files") or {}
    if not isinstance(files, dict):
        return [("files", "malformed entry in the manifest")]
    for name, entry in sorted(files.items()):
        if "/" in name or "\\" in name or name in ("", ".", "..") or not name.startswith("_"):
            out.append((name, "not a side file of this job directory"))
            continue
        if not loc.is_file(name):
            out.append((name, "missing"))
        elif loc.size(name) != entry.get("bytes"):
            out.append((name, f"{loc.size(name):,} bytes, {entry.get('bytes')} recorded"))
        elif loc.blake2b(name) != entry.get("blake2b"):
            out.append((name, "checksum differs from the one recorded (damaged or replaced)"))
    return out


def finished_problems(
    job_dir: Path | Location,
    manifest: Mapping[str, Any],
    tag: str | None,
    *,
    checksums: bool = True,
    read: PartReader | None = None,
) -> list[tuple[str, str]]:
    """(file, problem) for every part and side file of a finished job that is missing,
    damaged, foreign (``tag``: the config each part must embed; None skips that check), or
    present but not listed. ``checksums=False`` compares the parts' sizes only (nothing is
    read but the listings and the side files); ``read``: a reader's own check of each part
    present instead (:func:`pipeline.store.open_run` checks the copy it then reads)."""
    from concurrent.futures import ThreadPoolExecutor

    loc = location(job_dir)
    listed = listed_parts(manifest, loc)
    present = committed_chunks(loc)

    def check(chunk: int) -> str | None:
        info = listed[chunk]
        if chunk not in present:
            return "missing"
        if read is not None:
            return read(info, tag) or stats_problem(loc, info)
        if not checksums:
            size = loc.size(info.file)
            return None if size == info.bytes else f"{size:,} bytes, {info.bytes:,} recorded"
        return part_problem(loc, info, tag)

    # hashlib releases the GIL while it hashes a block, so the parts are checked on every core
    chunks = sorted(listed)
    with ThreadPoolExecutor(max_workers=min(len(chunks), os.cpu_count() or 1) or 1) as pool:
        found = list(pool.map(check, chunks))
    out = [(part_name(k), problem) for k, problem in zip(chunks, found, strict=True) if problem is not None]
    out += [(part_name(k), "not part of the finished job") for k in sorted(set(present) - set(listed))]
    return out + side_file_problems(job_dir, manifest)


def describe_problems(problems: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{name}: {why}" for name, why in problems[:3])
    return shown + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")


# ---------------------------------------------------------------- one verdict on a finished job


def count_problems(manifest: Mapping[str, Any], listed: Mapping[int, PartInfo]) -> list[tuple[str, str]]:
    """(file, problem) where the manifest's counts disagree with its parts: chunks not numbered
    0..n-1, rows that do not add up to the recorded count, fewer chunks than the config makes.
    Catches a part dropped together with its manifest entry, or counts edited, then resealed."""
    out: list[tuple[str, str]] = []
    chunks = sorted(listed)
    if chunks != list(range(len(chunks))):
        gaps = sorted(set(range(chunks[-1] + 1)) - set(chunks))[:5]
        out.append((MANIFEST, f"the parts list skips chunk(s) {', '.join(map(str, gaps))}"))
    rows = sum(info.rows for info in listed.values())
    fmt, identity = manifest.get("format"), manifest.get("identity")
    try:
        if fmt == FORMAT:
            counts = manifest["counts"]
            if counts["boards"] != rows:
                out.append((MANIFEST, f"records {counts['boards']} boards, its parts hold {rows:,}"))
            boards = identity["data"]["boards"]  # type: ignore[index]
            if boards["source"] == "generate":
                want, size = int(boards["count"]), int(boards["chunk_size"])
                if rows != want or len(chunks) != -(-want // size):
                    out.append(
                        (
                            MANIFEST,
                            f"the config makes {want:,} boards in {-(-want // size)} parts; "
                            f"listed: {rows:,} in {len(chunks)}",
                        )
                    )
            elif counts["input_rows"] != counts["boards"] + counts["rejected"]:
                out.append((MANIFEST, "its input rows are not its boards plus its rejected rows"))
        elif fmt == PROOF.format:
            total, size = int(manifest["classes_total"]), int(identity["chunk_size"])  # type: ignore[index]
            if rows != total or len(chunks) != -(-total // size):
                out.append(
                    (
                        MANIFEST,
                        f"records {total:,} classes in {-(-total // size)} parts; "
                        f"listed: {rows:,} in {len(chunks)}",
                    )
                )
    except (KeyError, TypeError, ValueError):
        out.append((MANIFEST, "its counts are missing or malformed"))
    return out


def job_problems(
    job_dir: Path | Location,
    manifest: Mapping[str, Any],
    *,
    checksums: bool = True,
    read: PartReader | None = None,
) -> list[tuple[str, str]]:
    """The one verdict on a finished job (run, proof or search), used by every reader, re-run
    and status: (file, problem) for every part or side file that is missing, damaged, foreign
    (its embedded identity is not the manifest's) or unlisted, and every count that does not
    add up. The manifest itself was checked (seal) by :func:`read_manifest`. Empty: intact.
    ``checksums`` and ``read``: as :func:`finished_problems`."""
    fmt, identity = manifest.get("format"), manifest.get("identity")
    if not isinstance(fmt, str) or not isinstance(identity, Mapping):
        return [(MANIFEST, "no format or identity recorded")]
    try:
        tag = part_tag(fmt, identity)
    except (KeyError, TypeError):
        return [(MANIFEST, "its identity is malformed")]
    listed = listed_parts(manifest, job_dir)
    parts = finished_problems(job_dir, manifest, tag, checksums=checksums, read=read)
    return parts + count_problems(manifest, listed)


def job_digest(manifest: Mapping[str, Any]) -> str:
    """The whole job's root hash, to publish beside it: BLAKE2b-256 of its sealed manifest in
    canonical JSON. The manifest lists every part's and side file's size and BLAKE2b, so a job
    that verifies against its manifest and whose manifest gives this digest is the job that was
    published, byte for byte (docs/methods/integrity.md)."""
    text = json.dumps(manifest, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return DIGEST_PREFIX + hashlib.blake2b(text.encode(), digest_size=32).hexdigest()


def parse_digest(text: str, what: str = "--expect") -> str:
    """A published digest as :func:`job_digest` writes it: ``blake2b-256:`` and 64 hex digits,
    the prefix optional and the case of either free (a digest copied in upper case is the same
    digest). Anything else is a ConfigError (exit 2): a typo, not a different job."""
    from pipeline.errors import ConfigError, quote

    body = text.strip().lower()
    if body.startswith(DIGEST_PREFIX):
        body = body[len(DIGEST_PREFIX) :]
    if not _DIGEST_HEX.fullmatch(body):
        raise ConfigError(
            f"{what} {quote(text, 100)}: not a digest ({DIGEST_PREFIX} and 64 hex digits, as "
            "boggle digest prints it)"
        )
    return DIGEST_PREFIX + body


def check_digest(manifest: Mapping[str, Any], expected: str | Iterable[str] | None, where: object) -> None:
    """A DamagedRunError unless the job's digest is ``expected`` (or one of several); None: no
    pin. The prefix ``blake2b-256:`` may be left out of an expected digest, and hex case does
    not matter; a malformed one is a ConfigError (:func:`parse_digest`)."""
    if expected is None:
        return
    wanted = {parse_digest(w) for w in ([expected] if isinstance(expected, str) else expected)}
    got = job_digest(manifest)
    if got not in wanted:
        raise DamagedRunError(
            f"{where}: its digest is {got}, not the one expected; this is not the published job"
        )
