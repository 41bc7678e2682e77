"""The rule sets of Scorpion and its variants.

Every variant is the same engine with a few parameters changed: the layout of the deal
(columns, rows, which cards are dealt face down, reserve stock or open reserve cells) and
what may fill an empty column. The reserve rule (``any-time`` or ``when-stuck``) is a
separate option of a game, valid for every variant that has a reserve stock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "SCORPION",
    "SCORPION_II",
    "THREE_BLIND_MICE",
    "VARIANTS",
    "WASP",
    "ReserveRule",
    "Variant",
    "VariantError",
    "get_variant",
]


class VariantError(ValueError):
    """Raise when a variant or reserve rule name is unknown."""


class ReserveRule(StrEnum):
    """When the reserve stock may be dealt."""

    ANY_TIME = "any-time"
    WHEN_STUCK = "when-stuck"

    @classmethod
    def parse(cls, text: str | ReserveRule) -> ReserveRule:
        """Return the rule named ``text``, or raise :class:`VariantError`."""
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(rule.value for rule in cls)
            raise VariantError(f"unknown reserve rule {text!r}: use one of {names}") from None


@dataclass(frozen=True, slots=True)
class Variant:
    """One rule set: its deal layout and what may fill an empty column."""

    name: str
    title: str
    pysol_id: int
    columns: int
    rows: int
    face_down_columns: tuple[int, ...]
    face_down_rows: int
    stock: int
    cells: int
    any_card_fills_empty: bool

    @property
    def tableau_cards(self) -> int:
        """Return how many cards the deal puts on the tableau."""
        return self.columns * self.rows

    def is_dealt_face_down(self, row: int, column: int) -> bool:
        """Tell whether the deal puts the card at ``row``/``column`` (from 0) face down."""
        return row < self.face_down_rows and column in self.face_down_columns

    def accepts_on_empty(self, card: int) -> bool:
        """Tell whether ``card`` may lead a group into an empty column."""
        return self.any_card_fills_empty or card % 13 == 12


SCORPION = Variant(
    name="scorpion",
    title="Scorpion",
    pysol_id=29,
    columns=7,
    rows=7,
    face_down_columns=(0, 1, 2, 3),
    face_down_rows=3,
    stock=3,
    cells=0,
    any_card_fills_empty=False,
)
SCORPION_II = Variant(
    name="scorpion-ii",
    title="Scorpion II",
    pysol_id=672,
    columns=7,
    rows=7,
    face_down_columns=(0, 1, 2),
    face_down_rows=3,
    stock=3,
    cells=0,
    any_card_fills_empty=False,
)
WASP = Variant(
    name="wasp",
    title="Wasp",
    pysol_id=185,
    columns=7,
    rows=7,
    face_down_columns=(0, 1, 2, 3),
    face_down_rows=3,
    stock=3,
    cells=0,
    any_card_fills_empty=True,
)
THREE_BLIND_MICE = Variant(
    name="three-blind-mice",
    title="Three Blind Mice",
    pysol_id=305,
    columns=10,
    rows=5,
    face_down_columns=(7, 8, 9),
    face_down_rows=3,
    stock=0,
    cells=2,
    any_card_fills_empty=False,
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (SCORPION, SCORPION_II, WASP, THREE_BLIND_MICE)}


def get_variant(name: str | Variant) -> Variant:
    """Return the variant named ``name``, or raise :class:`VariantError`."""
    if isinstance(name, Variant):
        return name
    variant = VARIANTS.get(name) if isinstance(name, str) else None
    if variant is None:
        raise VariantError(f"unknown variant {name!r}: use one of {', '.join(VARIANTS)}")
    return variant
