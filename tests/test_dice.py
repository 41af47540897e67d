"""Dice sets pinned to the cross-checked copy (a hash and literal faces); rolls and generators."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from pipeline.boards import (
    ENGLISH_FREQUENCIES,
    QU,
    Board,
    dice_set_names,
    generate_boards,
    generator_alphabet,
    load_dice_set,
    normalise_text,
)
from pipeline.lexicon import CompiledLexicon, compile_lexicon, tanglet_languages
from pipeline.rules import get_rules
from pipeline.solve import solve_arrays
from tests.conftest import REPO, need_data

PACKAGED = REPO / "pipeline" / "boards" / "dice_sets.json"


def decode(row: np.ndarray, faces: tuple[str, ...], rows: int, cols: int) -> Board:
    return Board(rows, cols, tuple("" if c < 0 else faces[c] for c in row))


#: SHA-256 of the cross-checked dice file (the project's reference copy, which the package ships
#: byte for byte): a change to any face of any set fails here, whatever else changed with it.
DICE_FILE_SHA256 = "91a7ff54f6032b70d672ace7d099411384f1e8aeb6a396100fd3a5a90fe61ffb"

#: The two 4x4 sets as literals, die by die ("Qu" one face): the sets every report compares.
PINNED = {
    "classic": "AACIOT ABILTY A/B/J/M/O/Qu ACDEMP ACELRS ADENVZ AHMORS BFIORX DENOSW DKNOTU EEFHIY "
    "EGINTV EGKLUY EHINPS ELPSTU GILRUW",
    "new": "AAEEGN ABBJOO ACHOPS AFFKPS AOOTTW CIMOTU DEILRX DELRVY DISTTY EEGHNW EEINSU EHRTVW "
    "EIOSST ELRTTY H/I/M/N/Qu/U HLNNRZ",
}


def pinned_dice(name: str) -> list[tuple[str, ...]]:
    return [tuple(d.split("/")) if "/" in d else tuple(d) for d in PINNED[name].split()]


def test_the_packaged_dice_file_is_the_cross_checked_copy() -> None:
    import hashlib

    assert hashlib.sha256(PACKAGED.read_bytes()).hexdigest() == DICE_FILE_SHA256
    packaged = json.loads(PACKAGED.read_text(encoding="utf-8"))
    assert set(packaged) == {"classic", "new", "big1979", "master", "superbig", "big2011"}
    assert {n: (e["size"], e["default_min_word_length"]) for n, e in packaged.items()} == {
        "classic": (4, 3),
        "new": (4, 3),
        "big1979": (5, 4),
        "master": (5, 4),
        "superbig": (6, 4),
        "big2011": (5, 4),
    }


@pytest.mark.parametrize("name", ["classic", "new"])
def test_loaded_sets_equal_the_pinned_faces(name: str) -> None:
    dice = load_dice_set(name)
    assert (dice.rows, dice.cols) == (4, 4)
    assert list(dice.dice) == [tuple(normalise_text(f) for f in die) for die in pinned_dice(name)]


@pytest.mark.parametrize("name", ["big1979", "master", "superbig", "big2011"])
def test_loaded_sets_equal_the_file(name: str) -> None:
    entry = json.loads(PACKAGED.read_text(encoding="utf-8"))[name]
    dice = load_dice_set(name)
    size = int(entry["size"])
    assert (dice.rows, dice.cols) == (size, size) and len(dice.dice) == size * size
    assert list(dice.dice) == [
        tuple("" if f == "" else normalise_text(f) for f in die) for die in entry["dice"]
    ]


def test_known_facts_about_the_sets() -> None:
    new = load_dice_set("new")
    assert sum(QU in die for die in new.dice) == 1
    superbig = load_dice_set("superbig")
    assert max(sum(f == "" for f in die) for die in superbig.dice) == 3  # the die with three blanks
    assert {"an", "er", "he", "in", "qu", "th"} <= superbig.faces  # the double-letter die


@pytest.mark.parametrize("name", ["classic", "new", "big1979", "master", "superbig", "big2011"])
def test_rolls_only_produce_rollable_boards(name: str) -> None:
    dice = load_dice_set(name)
    alphabet = generator_alphabet(name, dice.rows, dice.cols)
    boards = generate_boards(name, alphabet, np.random.default_rng(1), 200, dice.rows, dice.cols)
    assert boards.shape == (200, dice.rows * dice.cols)
    for row in boards:
        assert dice.can_roll(decode(row, alphabet.faces, dice.rows, dice.cols))
    # and can_roll is not vacuous: a board of one repeated letter is not rollable
    assert not dice.can_roll(Board(dice.rows, dice.cols, ("a",) * (dice.rows * dice.cols)))


def test_each_die_lands_once_and_faces_are_uniform() -> None:
    classic = load_dice_set("classic")
    alphabet = generator_alphabet("classic")
    boards = generate_boards("classic", alphabet, np.random.default_rng(3), 60_000, 4, 4)
    qu = alphabet.index[QU]
    # exactly one die has a Qu face (1 of 6): P(board shows Qu) = 1/6, never twice
    per_board = (boards == qu).sum(axis=1)
    assert per_board.max() == 1
    assert abs(per_board.mean() - 1 / 6) < 0.01
    # the Qu die lands on every cell equally often
    cells = np.flatnonzero(boards == qu) % 16
    counts = np.bincount(cells, minlength=16)
    assert counts.min() > 0.8 * counts.mean() and counts.max() < 1.2 * counts.mean()
    assert sum(QU in die for die in classic.dice) == 1


@pytest.mark.parametrize("name", ["new", "uniform", "english", "big1979"])
def test_generators_are_seeded_and_reproducible(name: str) -> None:
    rows = cols = 5 if name == "big1979" else 4
    alphabet = generator_alphabet(name, rows, cols)
    a = generate_boards(name, alphabet, np.random.default_rng(11), 100, rows, cols)
    b = generate_boards(name, alphabet, np.random.default_rng(11), 100, rows, cols)
    c = generate_boards(name, alphabet, np.random.default_rng(12), 100, rows, cols)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_letter_generators_use_a_to_z_with_qu() -> None:
    alphabet = generator_alphabet("uniform")
    assert QU in alphabet.faces and "q" not in alphabet.faces and len(alphabet) == 26
    uni = generate_boards("uniform", alphabet, np.random.default_rng(0), 20_000, 4, 4)
    counts = np.bincount(uni.ravel(), minlength=26)
    assert counts.min() > 0.9 * counts.mean() and counts.max() < 1.1 * counts.mean()
    eng = generate_boards("english", alphabet, np.random.default_rng(0), 20_000, 4, 4)
    freq = Counter(alphabet.faces[c] for c in eng.ravel())
    top = max(freq, key=lambda f: freq[f])
    assert top == "e" and freq["e"] > 10 * freq["z"]
    share = freq["e"] / eng.size
    want = ENGLISH_FREQUENCIES["e"] / sum(ENGLISH_FREQUENCIES.values())
    assert abs(share - want) < 0.005


def test_tanglet_dice_roll_rollable_boards() -> None:
    need_data("en" in tanglet_languages(), "tanglet-data is not installed")
    for rows in (4, 5):
        dice = load_dice_set("tanglet:en", rows, rows)
        alphabet = generator_alphabet("tanglet:en", rows, rows)
        boards = generate_boards("tanglet:en", alphabet, np.random.default_rng(2), 50, rows, rows)
        assert all(dice.can_roll(decode(r, alphabet.faces, rows, rows)) for r in boards)


def test_dice_set_names_are_the_packaged_ones() -> None:
    assert dice_set_names() == list(json.loads(PACKAGED.read_text(encoding="utf-8")))


@pytest.mark.parametrize(("name", "mean"), [("new", 141.06), ("classic", 124.7), ("uniform", 41.07)])
def test_mean_scores_match_the_reference_statistics(name: str, mean: float, enable2k_path: str) -> None:
    """docs/rules.md, "Reference statistics": with ENABLE2K, 100k boards average 141.06 (new),
    124.7 (classic), 41.07 (uniform). 4,000 boards estimate the mean to within 4.5 standard
    errors."""
    alphabet = generator_alphabet(name)
    lex: CompiledLexicon = compile_lexicon(enable2k_path, alphabet, get_rules("boggle"))
    boards = generate_boards(name, alphabet, np.random.default_rng(2024), 4000, 4, 4)
    scores = solve_arrays(boards, 4, 4, lex, collect=False).score
    se = float(scores.std()) / np.sqrt(len(scores))
    assert abs(float(scores.mean()) - mean) < 4.5 * se, (scores.mean(), se)
