"""Boards and where they come from: the board and its notations, the neighbour geometry, dice
sets and a designer's dice files, seeded generation, and (in :mod:`pipeline.boards.ingest`)
boards read from files.

* ``_board``: a :class:`Board` (a grid of faces; what a face is comes from
  :mod:`pipeline.lexicon.trie`), its shape and its notations (compact, grid, algs4);
* ``_geometry``: the neighbour tables of a shape and the 8 symmetries of its rectangle;
* ``_dice``: a :class:`DiceSet` and the record a run keeps of it;
* ``_dice_files``: a designer's own dice from a file (text, JSON or TOML), and back;
* ``_place``: a placement policy (which faces or dice may lie on which cell positions) and
  applying it to rolled dice;
* ``_roll``: the named sets and generators a ``--dice`` value names, and rolling boards;
* ``_generate``: seeded, chunked generation: the chunk plan, the seeds, compact output.
"""

from __future__ import annotations

from pipeline.boards._board import (
    MAX_CELLS,
    Board,
    check_cells,
    check_face,
    compact_strings,
    faces_of,
    format_algs4,
    format_compact,
    format_grid,
    format_shape,
    parse_algs4,
    parse_board_text,
    parse_compact,
    parse_grid,
    parse_shape,
)
from pipeline.boards._dice import DiceSet, dice_from_record
from pipeline.boards._dice_files import (
    DIE_BLANK_TOKEN,
    format_dice_text,
    read_dice_file,
)
from pipeline.boards._generate import (
    DEFAULT_CHUNK_SIZE,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_COUNT,
    ChunkPlan,
    GenerateChunk,
    check_chunk_cells,
    chunk_dice_layout,
    chunk_plan,
    chunk_seed,
    chunk_seeds,
    generate_chunk,
    generate_compact,
    iter_generated,
)
from pipeline.boards._geometry import Geometry, canonical, geometry, symmetries, symmetry_maps
from pipeline.boards._place import (
    POSITIONS,
    Placement,
    check_placement,
    parse_placement,
    place_dice,
    position_codes,
)
from pipeline.boards._roll import (
    ENGLISH_FREQUENCIES,
    GENERATORS,
    dice_set_names,
    generate_boards,
    generator_alphabet,
    generator_shape,
    is_dice_file,
    load_dice_set,
    roll_dice,
    roll_dice_layout,
    roll_letters,
)
from pipeline.lexicon.trie import BLANK, QU, is_face_char, normalise_text

__all__ = [
    "BLANK",
    "DEFAULT_CHUNK_SIZE",
    "DIE_BLANK_TOKEN",
    "ENGLISH_FREQUENCIES",
    "GENERATORS",
    "MAX_CELLS",
    "MAX_CHUNKS",
    "MAX_CHUNK_SIZE",
    "MAX_COUNT",
    "POSITIONS",
    "QU",
    "Board",
    "ChunkPlan",
    "DiceSet",
    "GenerateChunk",
    "Geometry",
    "Placement",
    "canonical",
    "check_cells",
    "check_chunk_cells",
    "check_face",
    "check_placement",
    "chunk_dice_layout",
    "chunk_plan",
    "chunk_seed",
    "chunk_seeds",
    "compact_strings",
    "dice_from_record",
    "dice_set_names",
    "faces_of",
    "format_algs4",
    "format_compact",
    "format_dice_text",
    "format_grid",
    "format_shape",
    "generate_boards",
    "generate_chunk",
    "generate_compact",
    "generator_alphabet",
    "generator_shape",
    "geometry",
    "is_dice_file",
    "is_face_char",
    "iter_generated",
    "load_dice_set",
    "normalise_text",
    "parse_algs4",
    "parse_board_text",
    "parse_compact",
    "parse_grid",
    "parse_placement",
    "parse_shape",
    "place_dice",
    "position_codes",
    "read_dice_file",
    "roll_dice",
    "roll_dice_layout",
    "roll_letters",
    "symmetries",
    "symmetry_maps",
]
