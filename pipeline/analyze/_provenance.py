"""What decided each run (dice, lexicon, rules, shape, seed or inputs), and run labels made of
what differs between the runs compared ("new dice · tanglet:en" vs "classic dice · tanglet:en").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The letter generators are not dice: their boards have no die per cell.
LETTER_GENERATORS = ("uniform", "english")


@dataclass(frozen=True)
class RunDescription:
    """One run's deciding facts, each as a short text (``""`` when the manifest lacks it)."""

    dice: str
    lexicon: str
    lexicon_hash: str
    rules: str
    shape: str
    origin: str
    boards: int | None
    date: str = ""  # the schedule's date a run was made for (manifest run_date), "" without one

    def parts(self) -> dict[str, str]:
        """The facts a label may be made of, in label order."""
        lexicon = self.lexicon
        return {
            "dice": self.dice,
            "lexicon": lexicon,
            "lexicon_hash": f"{lexicon} #{self.lexicon_hash}" if self.lexicon_hash else lexicon,
            "rules": f"{self.rules} rules" if self.rules else "",
            "shape": self.shape,
            "origin": self.origin,
        }

    def rows(self) -> list[tuple[str, str]]:
        """(field, value) pairs for the report's header block."""
        boards = f"{self.boards:,}" if self.boards is not None else "?"
        lexicon = f"{self.lexicon} (sha256 {self.lexicon_hash})" if self.lexicon_hash else self.lexicon
        return [
            ("dice / source", self.dice or "?"),
            ("lexicon", lexicon or "?"),
            ("rules", self.rules or "?"),
            ("shape", self.shape or "?"),
            ("seed / inputs", self.origin or "?"),
            ("boards", boards),
        ]


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _rules_text(rules: Mapping[str, Any]) -> str:
    name = str(rules.get("name") or "")
    extras = []
    if rules.get("min_length") not in (None, ""):
        extras.append(f"min {rules['min_length']}")
    if rules.get("revisit"):
        extras.append("revisit")
    return f"{name} ({', '.join(extras)})" if name and extras else name


def describe(manifest: Mapping[str, Any]) -> RunDescription:
    """The deciding facts of a run from its ``_SUCCESS`` manifest."""
    config = _as_dict(manifest.get("config"))
    boards = _as_dict(config.get("boards"))
    lexicon = _as_dict(manifest.get("lexicon"))
    rules = _as_dict(manifest.get("rules")) or _as_dict(config.get("rules"))
    if str(boards.get("source") or "") == "ingest":
        dice, origin = _ingested(boards)
    else:
        dice, origin = _generated(boards, _as_dict(manifest.get("dice")))
    date = manifest.get("run_date") or ""
    if date and origin:
        origin = f"date {date} ({origin})"
    count = _as_dict(manifest.get("counts")).get("boards")
    return RunDescription(
        dice=dice,
        lexicon=str(lexicon.get("name") or ""),
        lexicon_hash=str(lexicon.get("content_hash") or "")[:12],
        rules=_rules_text(rules),
        shape=str(boards.get("shape") or ""),
        origin=origin,
        boards=int(count) if isinstance(count, int | float) else None,
        date=str(date),
    )


def _ingested(boards: Mapping[str, Any]) -> tuple[str, str]:
    """(dice, origin) of an ingest run: its input files by name."""
    files = boards.get("files") or []
    names = [Path(str(f)).name for f in files] if isinstance(files, list) else []
    return "ingested boards", "inputs " + ", ".join(names) if names else "ingested"


def _generated(boards: Mapping[str, Any], record: Mapping[str, Any]) -> tuple[str, str]:
    """(dice, origin) of a generated run: the dice set (a dice file by its name and the hash of
    its faces; a letter generator by its name) and the seed."""
    generator = str(boards.get("dice") or "")
    dice = f"{generator} dice" if generator and generator not in LETTER_GENERATORS else generator
    if record.get("file"):
        dice = f"{Path(str(record['file'])).name} dice (sha256 {str(record.get('sha256') or '')[:8]})"
    return dice, f"seed {boards['seed']}" if boards.get("seed") is not None else ""


def differing_labels(descriptions: Sequence[RunDescription]) -> list[str] | None:
    """Labels made of the facts that differ between runs, or None when they tell no run apart.

    The lexicon hash is shown only when two lists share a name but not their content; dice and
    lexicon are always named when anything differs, so a label reads on its own.
    """
    if len(descriptions) < 2:
        return None
    parts = [d.parts() for d in descriptions]
    dates = [d.date for d in descriptions]
    if all(dates) and len(set(dates)) == len(dates):
        # nights of a schedule: named by their date, not their 20-digit seed
        for p, d in zip(parts, dates, strict=True):
            p["origin"] = d
    keys = _differing_keys(parts)
    if not keys:
        return None
    if keys == ["origin"] and all(dates):
        return [p["origin"] for p in parts]
    always = ["dice", "lexicon"] if "lexicon_hash" not in keys else ["dice"]
    shown = [k for k in parts[0] if k in keys or k in always]
    labels = [" · ".join(p[k] for k in shown if p[k]) for p in parts]
    return labels if len(set(labels)) == len(labels) and all(labels) else None


def _differing_keys(parts: Sequence[Mapping[str, str]]) -> list[str]:
    """The facts (keys of :meth:`RunDescription.parts`) that differ between runs; the lexicon's
    hash only when its name does not already tell the lists apart."""
    keys = [k for k in parts[0] if len({p[k] for p in parts}) > 1]
    if "lexicon" in keys and "lexicon_hash" in keys:
        keys.remove("lexicon_hash")
    return keys


def _dice_and_lexicon(d: RunDescription) -> str:
    return " · ".join(x for x in (d.dice, d.lexicon) if x)


def run_title(runs: Sequence[Any]) -> str:
    """The report's title: the runs' labels, or one run's dice and lexicon (``runs``: the
    :class:`~pipeline.analyze._runs.RunInfo` of each run)."""
    if len(runs) == 1:
        key = _dice_and_lexicon(describe(runs[0].manifest))
        return f"{key} ({runs[0].label})" if key and key != runs[0].label else runs[0].label
    dates = [describe(r.manifest).date for r in runs]
    if len(runs) > 2 and all(dates):  # nights of a schedule: their span, not every label
        key = _dice_and_lexicon(describe(runs[0].manifest))
        return f"{key}, {len(runs)} nights from {min(dates)} to {max(dates)}"
    return " vs ".join(r.label for r in runs)
