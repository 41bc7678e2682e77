"""Deals from game numbers, identical to PySolFC's, and competitive number drawing.

PySolFC shuffles a fresh pack with one of two generators, chosen by the game number:
numbers up to 32000 use the Microsoft FreeCell linear congruential generator (on the
pack rearranged into its interleaved order), larger numbers use Python's Mersenne Twister
seeded with the number. Both drive the same Fisher-Yates loop. The shuffled pack is then
dealt from its end, row by row. Reproducing that exactly means a race on our server can
be replayed in PySolFC under the same number.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .variant import Variant, get_variant

__all__ = [
    "COMPETITIVE_MIN",
    "MAX_NUMBER",
    "MS_MAX",
    "Deal",
    "DealError",
    "deal",
    "draw_competitive_number",
    "shuffled_pack",
]

MS_MAX = 32000
"""The largest game number shuffled with the Microsoft generator."""
COMPETITIVE_MIN = MS_MAX + 1
"""The smallest number in the Mersenne Twister range."""
MAX_NUMBER = 10**20 - 1
"""The largest game number PySolFC accepts (twenty digits)."""

# PySolFC numbers its pack in the suit order C S H D; ours is C D H S.
_PYSOL_SUIT_TO_OURS = (0, 3, 2, 1)


class DealError(ValueError):
    """Raise when a game number is out of range."""


class _MicrosoftRandom:
    """The Microsoft C runtime generator as used for FreeCell deals (seeds 1-32000)."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def randint(self, low: int, high: int) -> int:
        self.state = (self.state * 214013 + 2531011) & 0x1FFFFFFFF
        return low + ((self.state >> 16) & 0x7FFF) % (high + 1 - low)


class _MersenneRandom:
    """Python's Mersenne Twister with PySolFC's float-scaled ``randint``."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed).random

    def randint(self, low: int, high: int) -> int:
        return low + int(self.random() * (high + 1 - low))


def _pysol_pack() -> list[int]:
    """Return the fresh pack in PySolFC's order, as our card numbers."""
    return [_PYSOL_SUIT_TO_OURS[suit] * 13 + rank for suit in range(4) for rank in range(13)]


def shuffled_pack(number: int) -> list[int]:
    """Return the pack shuffled for game ``number``, in PySolFC's order (dealt from the end)."""
    check_number(number)
    pack = _pysol_pack()
    rng: _MicrosoftRandom | _MersenneRandom
    if number <= MS_MAX:
        # The Microsoft deals interleave the suits: A of each suit, then 2 of each, ...
        pack = [pack[rank + offset] for rank in range(13) for offset in (0, 39, 26, 13)]
        rng = _MicrosoftRandom(number)
    else:
        rng = _MersenneRandom(number)
    for n in range(len(pack) - 1, 0, -1):
        j = rng.randint(0, n)
        pack[n], pack[j] = pack[j], pack[n]
    return pack


def check_number(number: int) -> int:
    """Return ``number`` if it is a valid game number, else raise :class:`DealError`."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise DealError(f"a game number must be an integer, not {type(number).__name__}")
    if not 1 <= number <= MAX_NUMBER:
        raise DealError(f"game number {number} is out of range: use 1 to {MAX_NUMBER}")
    return number


@dataclass(frozen=True, slots=True)
class Deal:
    """The opening layout of one game: columns, face-down flags and the reserve."""

    variant: Variant
    number: int
    columns: tuple[tuple[int, ...], ...]
    face_down: tuple[int, ...]
    reserve: tuple[int, ...]

    def as_json(self) -> dict[str, object]:
        """Return the layout in the stable JSON shape of ``scorpion deal --json``."""
        from .card import card_text

        return {
            "variant": self.variant.name,
            "number": self.number,
            "columns": [
                [{"card": card_text(card), "face_up": row >= down} for row, card in enumerate(col)]
                for col, down in zip(self.columns, self.face_down, strict=True)
            ],
            "reserve": [card_text(card) for card in self.reserve],
        }


def deal(variant: str | Variant, number: int) -> Deal:
    """Deal game ``number`` of ``variant`` exactly as PySolFC does."""
    rules = get_variant(variant)
    pack = shuffled_pack(number)
    pack.reverse()
    columns: list[list[int]] = [[] for _ in range(rules.columns)]
    for i in range(rules.tableau_cards):
        columns[i % rules.columns].append(pack[i])
    face_down = tuple(
        sum(1 for row in range(rules.rows) if rules.is_dealt_face_down(row, col))
        for col in range(rules.columns)
    )
    return Deal(
        variant=rules,
        number=number,
        columns=tuple(tuple(col) for col in columns),
        face_down=face_down,
        reserve=tuple(pack[rules.tableau_cards :]),
    )


def draw_competitive_number(randbelow: Callable[[int], int]) -> int:
    """Draw a fresh game number for competitive play from the Mersenne Twister range.

    The range 32001 to 10**20 - 1 holds about 66.4 bits, so numbers cannot be enumerated
    the way the 32,000 Microsoft deals can. ``randbelow`` is the source of randomness,
    passed in so the core has none of its own: the server passes :func:`secrets.randbelow`.
    """
    return COMPETITIVE_MIN + randbelow(MAX_NUMBER - COMPETITIVE_MIN + 1)
