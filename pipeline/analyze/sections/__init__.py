"""The report's sections, each a function from tables to HTML.

Private modules: ``_designer`` (what answers a designer's questions: what decided each run, the
verdicts, face effects, dice and cell positions, word lists ranked by how common the words
are), ``_compare`` (each run against the first, runs of the same boards board by board, face
effects against the first run) and ``_quality`` (bad boards and their drivers, the boards of
each Tanglet band, the nights of a schedule).
"""

from pipeline.analyze.sections._compare import comparisons_section, face_comparisons_section, paired_section
from pipeline.analyze.sections._designer import (
    dice_changes_section,
    dice_section,
    face_effects_section,
    frequent_words_section,
    model_fit_text,
    runs_header,
    verdicts,
    what_if_note,
)
from pipeline.analyze.sections._quality import bad_boards_section, serve_section, trend_section

__all__ = [
    "bad_boards_section",
    "comparisons_section",
    "dice_changes_section",
    "dice_section",
    "face_comparisons_section",
    "face_effects_section",
    "frequent_words_section",
    "model_fit_text",
    "paired_section",
    "runs_header",
    "serve_section",
    "trend_section",
    "verdicts",
    "what_if_note",
]
