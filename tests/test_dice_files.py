"""A designer's own dice: dice files (text, JSON, TOML), their errors through the real CLI, the
run's record of the faces, analysis without the file, and ``boggle dice show``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.boards import (
    dice_from_record,
    format_dice_text,
    is_dice_file,
    load_dice_set,
    read_dice_file,
)
from pipeline.errors import BoggleError, ConfigError
from tests.conftest import REPO, one_error_line, read_side_json, run_boggle

NEW = load_dice_set("new")


def new_as_text(sep: str = " ", upper: bool = False) -> str:
    """The ``new`` set as a dice file written by hand: comments, blank lines, ``Qu``."""
    lines = ["# the new dice, by hand", ""]
    for die in NEW.dice:
        faces = ["Qu" if f == "qu" else (f.upper() if upper else f) for f in die]
        lines.append(sep.join(faces) + "   # a die")
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- reading


@pytest.mark.parametrize("sep,upper", [(" ", False), (",", True), (" , ", False), ("\t", True)])
def test_text_file_gives_the_built_in_faces_and_hash(tmp_path: Path, sep: str, upper: bool) -> None:
    got = read_dice_file(str(write(tmp_path, "mine.txt", new_as_text(sep, upper))))
    assert got.dice == NEW.dice
    assert (got.rows, got.cols) == (4, 4)
    assert got.sha256 == NEW.sha256
    assert got.file.endswith("mine.txt") and got.label == f"mine.txt dice (sha256 {NEW.sha256[:8]})"


def test_json_entry_of_the_packaged_sets_and_toml_read_the_same(tmp_path: Path) -> None:
    entry = json.loads((REPO / "pipeline/boards/dice_sets.json").read_text(encoding="utf-8"))["superbig"]
    from_json = read_dice_file(str(write(tmp_path, "sb.json", json.dumps(entry, indent=2))))
    assert from_json.dice == load_dice_set("superbig").dice and (from_json.rows, from_json.cols) == (6, 6)
    assert "" in from_json.faces | {f for d in from_json.dice for f in d}  # the blank faces kept
    toml = (
        "# superbig\ndice = [\n"
        + "".join("  [" + ", ".join(json.dumps(f) for f in die) + "],\n" for die in entry["dice"])
        + "]\n"
    )
    from_toml = read_dice_file(str(write(tmp_path, "sb.toml", toml)))
    assert from_toml.sha256 == from_json.sha256 == load_dice_set("superbig").sha256


def test_text_round_trip_keeps_blanks_and_multi_letter_faces(tmp_path: Path) -> None:
    sb = load_dice_set("superbig")
    back = read_dice_file(str(write(tmp_path, "sb.txt", format_dice_text(sb))))
    assert back.dice == sb.dice and back.sha256 == sb.sha256
    assert any("_" in line.split() for line in format_dice_text(sb).splitlines())


def test_shape_from_the_option_when_the_dice_fill_no_square(tmp_path: Path) -> None:
    path = str(write(tmp_path, "twelve.txt", "".join("a e i o u y\n" for _ in range(12))))
    assert (read_dice_file(path, 3, 4).rows, read_dice_file(path, 3, 4).cols) == (3, 4)
    with pytest.raises(ConfigError, match=r"twelve\.txt:12: 12 dice fill no square board"):
        read_dice_file(path)


def test_name_or_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "new").write_text("x x x x x x\n")  # a file named like a built-in set
    (tmp_path / "mine").write_text("a b c d e f\n")
    assert not is_dice_file("new") and not is_dice_file("uniform") and not is_dice_file("tanglet:en")
    assert is_dice_file("mine")  # no built-in of that name: the existing file
    assert (
        is_dice_file("x.txt") and is_dice_file("dice/x") and is_dice_file("X.TOML")
    )  # files, existing or not
    assert not is_dice_file("nope")  # neither: an unknown set name
    assert load_dice_set("new").dice == NEW.dice


def test_recorded_faces_rebuild_the_set_and_a_tampered_record_is_refused(tmp_path: Path) -> None:
    d = read_dice_file(str(write(tmp_path, "mine.txt", new_as_text())))
    record = json.loads(json.dumps(d.record()))
    assert dice_from_record(record) == d
    record["faces"][0][0] = "z"
    with pytest.raises(BoggleError, match="sha256"):
        dice_from_record(record)


# ---------------------------------------------------------------- errors through the CLI

BAD_FILES = {
    # name: (content, the line named, words in the message)
    "fifteen.txt": ("".join(" ".join(d) + "\n" for d in NEW.dice[:15]), 15, ["15 dice fill no square board"]),
    "empty-die.txt": ("a a e e g n\n , ,\n", 2, ["die 2 is empty"]),
    "digit.txt": ("# x\na a e e g n\na b b j 0 o\n", 3, ["die 2", "'0' is not letters"]),
    "short-die.txt": ("a a e e g n\na b b j o\n", 2, ["die 2 has 5 faces, die 1 has 6"]),
    "together.txt": ("aaeegn\n", 1, ["one face 'aaeegn'", "a a e e g n"]),
    "bad.json": (
        '{"size": 2, "dice": [\n  ["a", "b"],\n  ["c", "d"],\n  ["e", "3"],\n  ["g", "h"]\n]}\n',
        4,
        ["die 3", "'3' is not letters"],
    ),
    "empty.toml": ('dice = [\n  ["a", "b"],\n  [],\n]\n', 3, ["die 2 is empty"]),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_dice_file_is_one_line_naming_file_and_line(tmp_path: Path, name: str) -> None:
    text, line, needles = BAD_FILES[name]
    path = write(tmp_path, name, text)
    res = run_boggle("generate", "--dice", str(path), "-n", "1")
    assert res.returncode == 2 and res.stdout == ""
    one_error_line(res, f"{path}:{line}: ", *needles)


def test_wrong_die_count_for_the_shape_names_the_first_extra_die(tmp_path: Path) -> None:
    text = "".join(" ".join(d) + "\n" for d in NEW.dice) + "a b c d e f\n"  # 17 dice
    path = write(tmp_path, "seventeen.txt", "# header\n" + text)
    res = run_boggle(
        "run", "--dice", str(path), "--shape", "4x4", "--count", "10", "--out", str(tmp_path / "r")
    )
    assert res.returncode == 2
    one_error_line(res, f"{path}:18: ", "17 dice for a 4x4 board: it needs 16")
    assert not (tmp_path / "r").exists()


def test_missing_file_and_a_folder_are_refused(tmp_path: Path) -> None:
    gone = tmp_path / "gone.txt"
    res = run_boggle("generate", "--dice", str(gone))
    assert res.returncode == 2
    one_error_line(res, f"{gone}: dice file not found")
    folder = tmp_path / "adir.txt"
    folder.mkdir()
    res = run_boggle("dice", "show", str(folder))
    assert res.returncode == 2
    one_error_line(res, f"{folder}: not a regular file")


def test_config_dice_path_error_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, "digit.txt", "a b c 4\n")
    cfg = write(
        tmp_path, "run.toml", f'[boards]\ndice = "{path}"\ncount = 5\n[run]\nout = "{tmp_path / "r"}"\n'
    )
    res = run_boggle("run", str(cfg))
    assert res.returncode == 2
    one_error_line(res, f"{path}:1: ", "'4' is not letters")


def test_dice_show_prints_dice_and_face_counts(tmp_path: Path) -> None:
    path = write(tmp_path, "mine.txt", new_as_text(",", upper=True))
    res = run_boggle("dice", "show", str(path))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    dice_lines = [ln.split("#")[0].split() for ln in lines if not ln.startswith("#")]
    assert [tuple(d) for d in dice_lines] == list(NEW.dice)
    assert lines[1].endswith("# die  1") and lines[16].endswith("# die 16")
    counts = dict(zip(*[iter(lines[-1].split(": ", 1)[1].split())] * 2, strict=True))
    assert counts["e"] == str(sum(d.count("e") for d in NEW.dice)) == "11"
    assert counts["qu"] == "1" and sum(int(v) for v in counts.values()) == 96
    # the output is itself a dice file of the same faces
    again = read_dice_file(str(write(tmp_path, "again.txt", res.stdout)))
    assert again.sha256 == NEW.sha256


# ---------------------------------------------------------------- a run from a file, analysed


@pytest.mark.integration
def test_run_from_a_dice_file_is_recorded_and_analysed_without_the_file(tmp_path: Path) -> None:
    dice = write(tmp_path, "mydice.txt", new_as_text().replace("h l n n r z", "h l n n r s"))
    mine = read_dice_file(str(dice))
    out = tmp_path / "run"
    args = (
        "run",
        "--dice",
        str(dice),
        "--count",
        "400",
        "--chunk-size",
        "200",
        "--seed",
        "7",
        "-d",
        "enable2k",
        "-j",
        "1",
        "-q",
        "--out",
        str(out),
    )
    res = run_boggle(*args)
    assert res.returncode == 0, res.stderr
    manifest = read_side_json(out)
    assert manifest["dice"]["faces"] == [list(d) for d in mine.dice]
    assert manifest["dice"]["sha256"] == manifest["identity"]["dice"]["sha256"] == mine.sha256
    # the boards are the generator's: the same as `boggle generate` with the file
    gen = run_boggle("generate", "--dice", str(dice), "-n", "400", "--seed", "7", "--chunk-size", "200")
    from pipeline.store.dataset import read_run

    assert read_run(out, ["board"]).column("board").to_pylist() == gen.stdout.split()

    # an edited file is another run: refused, not resumed
    dice.write_text(new_as_text())
    res = run_boggle(*args)
    assert res.returncode == 4, res.stderr
    os.remove(dice)  # the analysis needs only the record
    report = tmp_path / "report"
    res = run_boggle("analyze", str(out), "--out", str(report), "-q")
    assert res.returncode == 0, res.stderr
    import pandas as pd

    table = pd.read_csv(report / "tables" / "dice.csv")
    assert len(table) == 16 and set(table["dice"]) == {f"mydice.txt (sha256 {mine.sha256[:8]})"}
    assert sorted(table["faces"]) == sorted(" ".join(d) for d in mine.dice)
    assert f"mydice.txt dice (sha256 {mine.sha256[:8]})" in (report / "report.html").read_text()
