from __future__ import annotations

import pytest

from pipeline.errors import RulesError
from pipeline.rules import default_rules_for_shape, get_rules


def test_standard_4x4_table() -> None:
    r = get_rules("boggle")
    assert [r.points(n) for n in range(1, 13)] == [0, 0, 1, 1, 2, 3, 5, 11, 11, 11, 11, 11]
    assert r.min_length == 3 and not r.revisit


def test_big_boggle_table() -> None:
    r = get_rules("big")
    assert [r.points(n) for n in range(1, 11)] == [0, 0, 0, 1, 2, 3, 5, 11, 11, 11]


def test_super_big_boggle_doubles_letters_from_nine() -> None:
    r = get_rules("superbig")
    assert [r.points(n) for n in range(3, 13)] == [0, 1, 2, 3, 5, 11, 18, 20, 22, 24]


def test_overrides_and_points_table() -> None:
    r = get_rules("boggle", min_length=4, scores={"4": 2, "5": 4})
    assert r.points(3) == 0 and r.points(4) == 2 and r.points(9) == 4
    assert r.points_table(5).tolist() == [0, 0, 0, 0, 2, 4]
    assert get_rules("boggle", revisit=True).revisit


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"min_length": 0}, "min_length"),
        ({"colour": 1}, "unknown rule field"),
        ({"scores": {"x": 1}}, "scores"),
    ],
)
def test_invalid_rules(kwargs: dict[str, object], msg: str) -> None:
    with pytest.raises(RulesError, match=msg):
        get_rules("boggle", **kwargs)  # type: ignore[arg-type]


def test_unknown_preset() -> None:
    with pytest.raises(RulesError, match="unknown rules 'huge'"):
        get_rules("huge")


def test_default_preset_by_size() -> None:
    assert [default_rules_for_shape(n, n) for n in (3, 4, 5, 6, 7)] == [
        "boggle",
        "boggle",
        "big",
        "superbig",
        "boggle",
    ]
    assert default_rules_for_shape(1, 5) == "boggle"
