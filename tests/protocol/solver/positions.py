"""Positions of known verdict shared by the solver's tests (its verdicts and its command)."""

from __future__ import annotations

# A King of spades face down under the rest of its suit: no move at all, and never won.
BURIED_KING = "scorpion any-time ksQSJSTS9S8S7S6S5S4S3S2SAS/-/-/-/-/-/- - CDH"
# The same buried King with the other three suits still to play: moves exist, yet it is lost.
BURIED_KING_WITH_MOVES = (
    "scorpion any-time ksQSJSTS9S8S7S6S5S4S3S2SAS/KCQCJCTC9C8C7C6C5C4C3C2C/AC/"
    "KDQDJDTD9D8D7D6D5D4D3D2D/ADKH/QHJHTH9H8H7H6H5H4H3H2HAH/- - -"
)
