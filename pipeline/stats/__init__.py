"""Statistics that merge: what the analysis of a run needs from its boards, as exact counts
and sums computed where the data is born (the worker that solved a chunk records them beside
its part) and added up across parts and runs.

* :func:`part_stats` computes one part's :class:`PartStats` from its Arrow table;
* :func:`to_bytes` / :func:`from_bytes` are the file the run store keeps beside the part;
* :func:`merge` (or :meth:`RunStats.add`) adds parts into a run's :class:`RunStats`;
* :func:`wilson` and :func:`mean_interval`: the 95% interval of a share and of a mean;
* :mod:`pipeline.stats._kernels` holds the loops over boards (X'X of the face models, the HC1
  meat the analysis computes in its second pass).

Integer score and word-count histograms keep the quantiles exact; face presence sums give the
raw face effects; the count design's ``X'X`` and ``X'y`` give the adjusted face, position and
die values; contingency counts give the bad-board drivers; word counts per word give the
frequent words; the best boards of each part give the run's best.
"""

from pipeline.stats._codec import from_bytes, to_bytes
from pipeline.stats._define import (
    BLANK_FACE,
    DEAD_CELL,
    DEFAULT_BAD_WORDS,
    MAX_VOWELS,
    POSITIONS,
    QU,
    RARE_LETTERS,
    VOWELS,
    WHERE,
    BadDefinition,
    decode_boards,
    decode_column,
    position_classes,
    rare_face,
    vowel_face,
)
from pipeline.stats._intervals import Z95, Interval, mean_interval, normal_interval, wilson
from pipeline.stats._kernels import face_cross, gram, meat
from pipeline.stats._merge import KeyCounts, RunStats, merge
from pipeline.stats._part import (
    DEFAULT_TOP,
    LEXICON_VOCAB,
    LOCAL_VOCAB,
    STATS_VERSION,
    VALUE_COLUMNS,
    BadCounts,
    DiceLayout,
    PartStats,
    StatsSpec,
    WordIds,
    bad_counts,
    die_sums,
    length_bins_of,
    part_stats,
    source_codes,
    top_boards,
    value_counts,
)

__all__ = [
    "BLANK_FACE",
    "DEAD_CELL",
    "DEFAULT_BAD_WORDS",
    "DEFAULT_TOP",
    "LEXICON_VOCAB",
    "LOCAL_VOCAB",
    "MAX_VOWELS",
    "POSITIONS",
    "QU",
    "RARE_LETTERS",
    "STATS_VERSION",
    "VALUE_COLUMNS",
    "VOWELS",
    "WHERE",
    "Z95",
    "BadCounts",
    "BadDefinition",
    "DiceLayout",
    "Interval",
    "KeyCounts",
    "PartStats",
    "RunStats",
    "StatsSpec",
    "WordIds",
    "bad_counts",
    "decode_boards",
    "decode_column",
    "die_sums",
    "face_cross",
    "from_bytes",
    "gram",
    "length_bins_of",
    "mean_interval",
    "meat",
    "merge",
    "normal_interval",
    "part_stats",
    "position_classes",
    "rare_face",
    "source_codes",
    "to_bytes",
    "top_boards",
    "value_counts",
    "vowel_face",
    "wilson",
]
