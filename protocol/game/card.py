"""Cards as small integers, and their two-character notation.

A card is an ``int`` in ``range(52)``: ``suit * 13 + rank - 1`` with suits in the order
``C D H S`` and ranks 1 (Ace) to 13 (King). Two cards of one suit that differ by one in
rank are therefore adjacent integers, which keeps the move generator cheap: the only card
that may go on card ``t`` is ``t - 1`` (when ``t`` is not an Ace).
"""

from __future__ import annotations

__all__ = [
    "ACE",
    "KING",
    "RANKS",
    "SUITS",
    "CardError",
    "all_cards",
    "card_from_text",
    "card_text",
    "make_card",
    "rank_of",
    "suit_of",
]

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ACE = 1
KING = 13


class CardError(ValueError):
    """Raise when a card's text or number is not a card."""


def make_card(rank: int, suit: int) -> int:
    """Return the card of ``rank`` (1-13) in suit index ``suit`` (0-3, ``CDHS``)."""
    if not 1 <= rank <= 13 or not 0 <= suit <= 3:
        raise CardError(f"no card has rank {rank} and suit {suit}")
    return suit * 13 + rank - 1


def rank_of(card: int) -> int:
    """Return the rank of ``card``: 1 for an Ace up to 13 for a King."""
    return card % 13 + 1


def suit_of(card: int) -> int:
    """Return the suit index of ``card`` (0-3, in the order ``CDHS``)."""
    return card // 13


_TEXT = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(52))
_FROM_TEXT = {text: card for card, text in enumerate(_TEXT)}


def card_text(card: int) -> str:
    """Return the two-character text of ``card``, rank then suit (``TH`` is the ten of hearts)."""
    if not 0 <= card < 52:
        raise CardError(f"{card!r} is not a card number (0-51)")
    return _TEXT[card]


def card_from_text(text: str) -> int:
    """Parse a two-character card such as ``7H`` (case-insensitive) into a card number."""
    card = _FROM_TEXT.get(text.upper()) if isinstance(text, str) else None
    if card is None:
        raise CardError(
            f"{text!r} is not a card: use a rank from {RANKS} then a suit from {SUITS}, e.g. 'TH'"
        )
    return card


def all_cards() -> range:
    """Return every card number of the pack."""
    return range(52)
