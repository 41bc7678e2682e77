"""Deals: a known answer, agreement with the pysol-cards oracle, number checks, the CLI contract.

pysol-cards is imported here only as an independent oracle of PySolFC's shuffle.
"""

from __future__ import annotations

import io
import json
import random
import secrets
from contextlib import redirect_stderr, redirect_stdout

import pytest
from pysol_cards.cards import createCards  # type: ignore[import-untyped]
from pysol_cards.random import shuffle  # type: ignore[import-untyped]
from pysol_cards.random_base import RandomBase  # type: ignore[import-untyped]

from client.cli import main
from protocol.game import (
    COMPETITIVE_MIN,
    MAX_NUMBER,
    VARIANTS,
    Board,
    DealError,
    board_to_text,
    card_text,
    check_number,
    deal,
    draw_competitive_number,
)
from protocol.game.deal import MS_MAX, shuffled_pack

ORACLE_RANKS = "A23456789TJQK"
ORACLE_SUITS = "CSHD"  # pysol-cards numbers its suits in this order


def oracle(variant: str, number: int) -> tuple[list[list[str]], list[str]]:
    """Deal ``number`` with pysol-cards: the shuffled pack reversed, dealt row by row."""
    rules = VARIANTS[variant]
    pack = list(reversed(shuffle(createCards(1), number, RandomBase.DEALS_PYSOLFC)))
    names = [ORACLE_RANKS[card.rank - 1] + ORACLE_SUITS[card.suit] for card in pack]
    columns: list[list[str]] = [[] for _ in range(rules.columns)]
    for index in range(rules.tableau_cards):
        columns[index % rules.columns].append(names[index])
    return columns, names[rules.tableau_cards :]


def ours(variant: str, number: int) -> tuple[list[list[str]], list[str]]:
    layout = deal(variant, number)
    return [[card_text(c) for c in col] for col in layout.columns], [card_text(c) for c in layout.reserve]


LARGE_NUMBERS = sorted(
    {32001, 32002, 2**32 - 1, 2**32, 2**32 + 1, 2**53, 2**64, MAX_NUMBER - 1, MAX_NUMBER}
    | {random.Random(2024).randrange(COMPETITIVE_MIN, MAX_NUMBER + 1) for _ in range(300)}
    | {random.Random(7).randrange(COMPETITIVE_MIN, 10**9) for _ in range(40)}
)
SMALL_NUMBERS = [*range(1, 301), *range(31990, 32001)]


# -- known answer ------------------------------------------------------------------------


def test_scorpion_deal_one_matches_the_known_layout() -> None:
    layout = deal("scorpion", 1)
    columns = [[card_text(c) for c in col] for col in layout.columns]
    assert columns[0] == ["JD", "5H", "KH", "AS", "4H", "TH", "8D"]
    assert columns[6] == ["7C", "QC", "JS", "QH", "4S", "8S", "6S"]
    assert [card_text(c) for c in layout.reserve] == ["9C", "2H", "6H"]
    assert layout.face_down[0] == 3
    assert layout.number == 1
    assert layout.variant.name == "scorpion"


def test_scorpion_deal_one_in_position_notation() -> None:
    assert board_to_text(Board.new("scorpion", 1)) == (
        "scorpion any-time jd5hkhAS4HTH8D/2dkd3hAHAC8HQS/9hkc2s3C4D2C6C/jc9sks4C7SJH3D/"
        "5D5S9D5C3S7D8C/7HADQDTSTD6DTC/7CQCJSQH4S8S6S 9c2h6h -"
    )


def test_every_deal_uses_the_whole_pack_once() -> None:
    for variant in VARIANTS:
        for number in (1, 32000, 32001, MAX_NUMBER):
            layout = deal(variant, number)
            cards = [c for col in layout.columns for c in col] + list(layout.reserve)
            assert sorted(cards) == list(range(52))


# -- the oracle --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_microsoft_range_deals_equal_pysol_cards(variant: str) -> None:
    for number in SMALL_NUMBERS:
        assert ours(variant, number) == oracle(variant, number), number


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_mersenne_range_deals_equal_pysol_cards(variant: str) -> None:
    for number in [*range(32001, 32011), *LARGE_NUMBERS]:
        assert ours(variant, number) == oracle(variant, number), number


def test_the_two_generators_meet_at_32000() -> None:
    assert MS_MAX == 32000
    assert COMPETITIVE_MIN == 32001
    # 32000 and 32001 come from different generators and, like any two numbers, differ.
    assert ours("scorpion", 32000) != ours("scorpion", 32001)


def test_shuffled_pack_is_the_deal_read_backwards() -> None:
    pack = shuffled_pack(5)
    layout = deal("scorpion", 5)
    dealt = list(reversed(pack))
    assert [dealt[row * 7 + 0] for row in range(7)] == list(layout.columns[0])
    assert dealt[49:] == list(layout.reserve)


# -- numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize("number", [0, -1, -32000, MAX_NUMBER + 1, 10**20, 10**30])
def test_out_of_range_number_raises_deal_error(number: int) -> None:
    with pytest.raises(DealError, match="out of range"):
        deal("scorpion", number)
    with pytest.raises(DealError):
        check_number(number)


@pytest.mark.parametrize("number", [True, False, "1", 1.0, None, [1]])
def test_non_integer_number_raises_deal_error(number: object) -> None:
    with pytest.raises(DealError, match="must be an integer"):
        deal("scorpion", number)  # type: ignore[arg-type]


def test_bounds_are_accepted() -> None:
    assert check_number(1) == 1
    assert check_number(MAX_NUMBER) == MAX_NUMBER
    assert MAX_NUMBER == 10**20 - 1


def test_competitive_number_uses_randbelow_over_the_whole_mersenne_range() -> None:
    seen: list[int] = []

    def lowest(n: int) -> int:
        seen.append(n)
        return 0

    assert draw_competitive_number(lowest) == 32001
    assert seen == [MAX_NUMBER - 32001 + 1]
    assert draw_competitive_number(lambda n: n - 1) == MAX_NUMBER
    assert draw_competitive_number(lambda n: 12345) == 32001 + 12345


def test_default_competitive_number_is_a_valid_mersenne_number() -> None:
    numbers = {draw_competitive_number(secrets.randbelow) for _ in range(50)}
    assert all(32000 < n <= MAX_NUMBER for n in numbers)
    assert len(numbers) == 50  # 66 bits of choice: a repeat would mean a broken source
    for n in numbers:
        deal("scorpion", n)


# -- reproducibility ---------------------------------------------------------------------


def test_deals_are_reproducible_and_independent_of_global_random_state() -> None:
    first = deal("wasp", 987654321)
    random.seed(1)
    random.random()
    assert deal("wasp", 987654321) == first
    assert deal("wasp", 987654321).columns != deal("wasp", 987654322).columns


# -- the CLI contract --------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_deal_json_prints_the_documented_shape() -> None:
    code, out, _ = run_cli("deal", "--number", "1", "--json")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["variant", "number", "columns", "reserve"]
    assert data["variant"] == "scorpion"
    assert data["number"] == 1
    assert len(data["columns"]) == 7
    assert data["columns"][0] == [
        {"card": "JD", "face_up": False},
        {"card": "5H", "face_up": False},
        {"card": "KH", "face_up": False},
        {"card": "AS", "face_up": True},
        {"card": "4H", "face_up": True},
        {"card": "TH", "face_up": True},
        {"card": "8D", "face_up": True},
    ]
    assert [entry["card"] for entry in data["columns"][6]] == ["7C", "QC", "JS", "QH", "4S", "8S", "6S"]
    assert all(entry["face_up"] for entry in data["columns"][6])
    assert data["reserve"] == ["9C", "2H", "6H"]
    assert out.endswith("\n") and out.count("\n") == 1


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_deal_json_matches_the_engine_for_every_variant(variant: str) -> None:
    number = 10**20 - 1
    code, out, _ = run_cli("deal", "--variant", variant, "--number", str(number), "--json")
    assert code == 0
    data = json.loads(out)
    layout = deal(variant, number)
    assert data == layout.as_json()
    assert data["number"] == number
    rules = VARIANTS[variant]
    assert [len(col) for col in data["columns"]] == [rules.rows] * rules.columns
    assert len(data["reserve"]) == 52 - rules.tableau_cards
    for col, down in zip(data["columns"], layout.face_down, strict=True):
        assert [entry["face_up"] for entry in col] == [row >= down for row in range(rules.rows)]
        assert all(set(entry) == {"card", "face_up"} for entry in col)


def test_deal_with_notation_prints_the_position_notation() -> None:
    code, out, _ = run_cli("deal", "--number", "1", "--notation")
    assert code == 0
    assert out == board_to_text(Board.new("scorpion", 1)) + "\n"


def test_deal_without_options_draws_the_layout_with_face_down_cards_bracketed() -> None:
    code, out, _ = run_cli("deal", "--number", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("scorpion deal 1: 7 columns")
    assert lines[1].split() == ["1", "[J♦]", "[5♥]", "[K♥]", "A♠", "4♥", "T♥", "8♦"]
    assert len([line for line in lines if line.strip()[:1].isdigit()]) == 7


@pytest.mark.parametrize("number", ["0", "-5", str(10**20)])
def test_deal_cli_rejects_a_bad_number_with_exit_code_two(number: str) -> None:
    code, out, err = run_cli("deal", "--number", number, "--json")
    assert code == 2
    assert out == ""
    assert err.startswith("scorpion deal: game number")
