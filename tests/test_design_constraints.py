"""design-dice's per-die constraints: a search never proposes a set outside them (hypothesis over
random starts, constraints and seeds), a start outside them is brought within first, the
constraints are part of the design's identity, and the proposed set is diffed die by die and
checked for what a publisher would reject."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pipeline.boards import QU, DiceSet, load_dice_set
from pipeline.design import DesignConfig, design_dice, propose
from pipeline.design._constraints import (
    DieConstraints,
    check_reachable,
    dice_changes,
    printability_warnings,
    rares,
    vowels,
)
from pipeline.design._search import constrained_start
from pipeline.errors import ConfigError, OutputConflictError
from tests.conftest import one_error_line, run_boggle

LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1) if chr(c) != "q"] + [QU]
VOWELS = set("aeiou")
RARE = set("jkxz") | {QU}


def by_hand_fits(die: tuple[str, ...], c: DieConstraints) -> bool:
    """The constraints restated from their definitions (not through the module's helpers)."""
    faces = [f for f in die if f != ""]
    if (
        c.min_vowels is not None
        and sum(f != QU and any(ch in VOWELS for ch in f) for f in faces) < c.min_vowels
    ):
        return False
    if c.max_rare is not None and sum(f == QU or any(ch in "jkqxz" for ch in f) for f in faces) > c.max_rare:
        return False
    return c.max_same is None or max(Counter(faces).values(), default=0) <= c.max_same


def dice_set(dice: list[list[str]]) -> DiceSet:
    return DiceSet("random", 1, len(dice), tuple(tuple(d) for d in dice))


def cfg_for(tmp_path: Path, c: DieConstraints, faces: str, seed: int, **kw: Any) -> DesignConfig:
    return DesignConfig(
        "new",
        "mean",
        "enable2k",
        str(tmp_path / "unused"),
        faces=faces,
        seed=seed,
        min_vowels=c.min_vowels,
        max_rare=c.max_rare,
        max_same=c.max_same,
        keep_qu_die=c.keep_qu_die,
        **kw,
    )


face = st.sampled_from([*LETTERS, *"aeiou", *"aeiou", "in", "th", ""])


@st.composite
def starts(draw: st.DrawFn) -> list[list[str]]:
    n = draw(st.integers(2, 12))
    width = draw(st.integers(2, 6))
    return [draw(st.lists(face, min_size=width, max_size=width)) for _ in range(n)]


constraints = st.builds(
    DieConstraints,
    min_vowels=st.sampled_from([None, 1, 2]),
    max_rare=st.sampled_from([None, 0, 1, 2]),
    max_same=st.sampled_from([None, 1, 2, 3]),
    keep_qu_die=st.booleans(),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=starts(),
    c=constraints,
    free=st.booleans(),
    keep_qu=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_no_proposed_set_ever_breaks_a_constraint(
    tmp_path: Path, start: list[list[str]], c: DieConstraints, free: bool, keep_qu: bool, seed: int
) -> None:
    """From a random start, with random constraints and seed: the repaired start and every set a
    walk of proposed moves reaches meet every constraint on every die (checked by hand), the
    letters are kept with fixed faces, and a Qu face kept on its die stays there."""
    letters = LETTERS if free else None
    cfg = cfg_for(tmp_path, c, "free" if free else "fixed", seed, keep_qu=keep_qu)
    ds = dice_set(start)
    try:
        dice, repaired = constrained_start(cfg, ds, letters)
    except ConfigError as exc:
        assert any(k in exc.message for k in ("--min-vowels", "--max-rare", "--max-same", "constraints"))
        assume(False)  # too many such starts and hypothesis reports it: the property would be vacuous
    qu_on = [d.count(QU) for d in ds.dice]
    for step in range(40):
        assert all(by_hand_fits(d, c) for d in dice), (step, dice)
        if not free:
            assert Counter(f for d in dice for f in d) == ds.face_counts()
        if c.keep_qu_die:
            assert all(d.count(QU) >= k for k, d in zip(qu_on, dice, strict=True))  # no Qu leaves its die
        if keep_qu:
            assert sum(d.count(QU) for d in dice) == sum(
                qu_on
            )  # with --keep-qu no replacement takes or brings one
        move = propose(dice, np.random.default_rng([seed, step]), letters, keep_qu, constraints=c)
        if move is None:
            break
        dice = move.apply(dice)
    if not c.any:
        assert repaired == [] and constrained_start(cfg, ds, letters)[0] == ds.dice


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["new", "classic", "big1979", "master"]),
    min_vowels=st.sampled_from([None, 1]),
    max_rare=st.sampled_from([None, 1, 2]),
    max_same=st.sampled_from([None, 2, 3]),
    keep_qu_die=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_shipped_sets_are_always_brought_within_reachable_constraints(
    tmp_path: Path,
    name: str,
    min_vowels: int | None,
    max_rare: int | None,
    max_same: int | None,
    keep_qu_die: bool,
    seed: int,
) -> None:
    """Constraints a shipped set can meet by swaps alone are met, whatever the seed, with no more
    moves than the dice outside them need changes for."""
    c = DieConstraints(min_vowels, max_rare, max_same, keep_qu_die)
    start = load_dice_set(name)
    dice, repaired = constrained_start(cfg_for(tmp_path, c, "fixed", seed), start, None)
    assert all(by_hand_fits(d, c) for d in dice)
    assert Counter(f for d in dice for f in d) == start.face_counts()
    assert len(repaired) <= sum(c.excess(d) for d in start.dice)  # each move lowers the excess
    if not c.any or all(c.fits(d) for d in start.dice):
        assert dice == start.dice and repaired == []


def test_new_gets_a_vowel_on_every_die_and_keeps_it_through_the_search(tmp_path: Path) -> None:
    """The issue's "done when": design-dice told to keep a vowel on every die. The `new` set's
    die 16 (h l n n r z) has none: it is given one before the search, and no accepted move or
    candidate takes it away."""
    new = load_dice_set("new")
    assert [k + 1 for k, d in enumerate(new.dice) if vowels(d) == 0] == [16]
    seen: list[Any] = []
    import pipeline.design._search as search

    real = search.evaluate_candidate

    def spy(solver: Any, objective: Any, cfg: Any, table_inc: Any, table_cand: Any, batch_of: Any) -> Any:
        seen.append(table_cand.copy())
        return real(solver, objective, cfg, table_inc, table_cand, batch_of)

    cfg = DesignConfig(
        "new",
        "band:200..250",
        "enable2k",
        str(tmp_path / "vowels"),
        budget=30_000,
        batch=1_000,
        max_batches=2,
        validate=2_000,
        seed=3,
        min_vowels=1,
    )
    monkey = pytest.MonkeyPatch()
    monkey.setattr(search, "evaluate_candidate", spy)
    try:
        res = design_dice(cfg)
    finally:
        monkey.undo()
    proposed = load_dice_set(str(res.out / "dice.txt"))
    assert all(vowels(d) >= 1 for d in proposed.dice)
    assert proposed.face_counts() == new.face_counts()  # --faces fixed: only swaps
    report = json.loads((res.out / "report.json").read_text())
    assert report["constraints"] == {
        "min_vowels": 1,
        "max_rare": None,
        "max_same": None,
        "keep_qu_die": False,
    }
    assert len(report["repair"]) >= 1 and "die 16" in " ".join(report["repair"])
    assert not any(w["warning"] == "no vowel face" for w in report["warnings"])
    # every candidate the search tested had a vowel face on every die
    from pipeline.design import prepare

    _, _, lexicon, _ = prepare(cfg)
    vowel_codes = {k for k, f in enumerate(lexicon.alphabet.faces) if f != QU and set(f) & VOWELS}
    assert len(seen) >= 3
    for table in seen:
        assert all(any(int(x) in vowel_codes for x in row) for row in table)
    # the per-die diff accounts for every changed die
    changed = [
        k + 1 for k, (a, b) in enumerate(zip(new.dice, proposed.dice, strict=True)) if sorted(a) != sorted(b)
    ]
    assert [c["die"] for c in report["dice_changes"]] == changed


def test_constraints_are_in_the_identity_and_a_resume_with_others_is_refused(tmp_path: Path) -> None:
    base = dict(budget=3_000, batch=500, max_batches=1, validate=1_000, seed=1)
    out = str(tmp_path / "d")
    plain = DesignConfig("new", "mean", "enable2k", out, **base)  # type: ignore[arg-type]
    from pipeline.design import prepare

    start, _, lexicon, _ = prepare(plain)
    assert "constraints" not in plain.identity(start, lexicon)  # searches without any keep their identity
    one = DesignConfig("new", "mean", "enable2k", out, min_vowels=1, **base)  # type: ignore[arg-type]
    two = DesignConfig("new", "mean", "enable2k", out, min_vowels=2, **base)  # type: ignore[arg-type]
    assert one.identity(start, lexicon) != two.identity(start, lexicon)
    design_dice(one)
    with pytest.raises(OutputConflictError):
        design_dice(two)
    qu = DesignConfig("new", "mean", "enable2k", out, min_vowels=1, keep_qu_die=True, **base)  # type: ignore[arg-type]
    with pytest.raises(OutputConflictError):
        design_dice(qu)
    assert design_dice(one).status == "already complete"


def test_bad_and_unreachable_constraints_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    for kw, needle in (({"min_vowels": 0}, "--min-vowels"), ({"max_rare": -1}, "--max-rare")):
        with pytest.raises(ConfigError, match=needle):
            DesignConfig("new", "mean", "enable2k", str(tmp_path / "x"), **kw)  # type: ignore[arg-type]
    new = load_dice_set("new")
    total = sum(vowels(d) for d in new.dice)
    assert total < 16 * 3
    out = tmp_path / "o"
    res = run_boggle(
        "design-dice", "--start", "new", "--min-vowels", "3", "-d", "enable2k", "--out", str(out), "-q"
    )
    assert res.returncode == 2, res.stderr
    one_error_line(res, f"--min-vowels 3: the set has {total} vowel faces and 16 dice need 48")
    assert not out.exists()
    rare = sum(rares(d) for d in new.dice)
    fixed = cfg_for(tmp_path, DieConstraints(max_rare=0), "fixed", 0)
    with pytest.raises(ConfigError, match=f"--max-rare 0: the set has {rare} rare faces"):
        constrained_start(fixed, new, None)
    free = cfg_for(tmp_path, DieConstraints(max_rare=0), "free", 0)  # --keep-qu: the Qu face stays
    with pytest.raises(ConfigError, match="--max-rare 0: the set's 1 Qu faces are rare and stay"):
        constrained_start(free, new, LETTERS)
    with pytest.raises(ConfigError, match="--min-vowels 7: a die has only 6 faces"):
        constrained_start(cfg_for(tmp_path, DieConstraints(min_vowels=7), "free", 0), new, LETTERS)
    # reachable by replacements: the free search gets rid of every rare face but the Qu
    dice, _ = constrained_start(
        cfg_for(tmp_path, DieConstraints(max_rare=0), "free", 0, keep_qu=False), new, LETTERS
    )
    assert sum(rares(d) for d in dice) == 0


def test_the_per_die_diff_and_the_printability_warnings() -> None:
    start = (("a", "e", "i", "o", "u", "y"), ("c", "s", "t", "d", "n", "r"), ("b", "b", "b", "e", "e", "e"))
    proposed = (
        ("a", "e", "i", "o", "t", "y"),
        ("c", "s", "x", "d", "j", "r"),
        ("b", "b", "b", "e", "e", "e"),
    )
    changes = dice_changes(start, proposed)
    assert [(c["die"], c["removed"], c["added"]) for c in changes] == [
        (1, ["u"], ["t"]),
        (2, ["n", "t"], ["j", "x"]),
    ]
    assert changes[1]["start"] == list(start[1]) and changes[1]["proposed"] == list(proposed[1])
    warnings = printability_warnings(start, proposed)
    got = [(w["die"], w["warning"], w["in_start"]) for w in warnings]
    assert got == [
        (2, "a dump die: no vowel and 2 rare faces (x, j)", False),
        (3, "3 x b (more than 2 of a letter)", True),
        (3, "3 x e (more than 2 of a letter)", True),
    ]
    # the start's vowel-less die 2 is flagged as such, and a die with j and a vowel as two rare faces
    assert next(w["warning"] for w in printability_warnings(start, start)) == "no vowel face"
    jx = (("j", "x", "a", "b", "c", "d"),)
    assert [w["warning"] for w in printability_warnings(jx, jx)] == ["2 rare faces on one die (j, x)"]
    assert printability_warnings(jx, jx, max_same=1) == printability_warnings(jx, jx)
    assert [w["warning"] for w in printability_warnings(start, start, max_same=3)] == ["no vowel face"]


def test_the_cli_prints_the_diff_and_the_warnings(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    args = ["design-dice", "--objective", "mean", "--budget", "4k", "--batch", "500", "--max-batches", "2"]
    args += [
        "--validate",
        "1000",
        "--min-vowels",
        "1",
        "--max-rare",
        "1",
        "-d",
        "enable2k",
        "--out",
        str(out),
    ]
    res = run_boggle(*args, "-q", "--summary-json", "-")
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["constraints"]["min_vowels"] == 1 and summary["constraints"]["max_rare"] == 1
    assert summary["repair"] and isinstance(summary["dice_changes"], list)
    assert "start brought within the per-die constraints by" in res.stderr
    assert "dice changed, start -> proposed:" in res.stderr
    for change in summary["dice_changes"]:
        assert f"  die {change['die']:>2}: {' '.join(change['start'])}" in res.stderr
    proposed = load_dice_set(str(out / "dice.txt"))
    assert all(vowels(d) >= 1 and rares(d) <= 1 for d in proposed.dice)


def test_a_set_of_blank_dice_has_no_face_over_max_same() -> None:
    # hypothesis found it (CI, 2026-12-06): the commonest face of a set with no face raised
    # IndexError; with faces fixed there is nothing to refuse, and a blank die holds no vowel
    check_reachable((("", ""), ("", "")), DieConstraints(max_same=1), None, False)
    with pytest.raises(ConfigError, match="--min-vowels 1: a die has only 0 faces"):
        check_reachable((("", ""), ("", "")), DieConstraints(min_vowels=1, max_same=1), None, False)
