"""The wire contract's limits and field types, and the small helpers the records share.

Each field type names one kind of value of the contract with its limits, as msgspec's
``Annotated[..., Meta(...)]``, so msgspec checks it in C while it decodes a frame;
``PATTERN_WORDS`` says each pattern in words for the error a client gets. Public through
:mod:`protocol.wire.message`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Annotated, Any, Final

import msgspec
import regex
from msgspec import Meta

from ..game.variant import VARIANTS, ReserveRule
from .error import ErrorCode, ProtocolError

MAX_VERSION: Final = 2**31 - 1
"""Largest event version (versions count from 1; a request's ``v`` of 0 means "seen nothing")."""
MAX_REF: Final = 2**53 - 1
"""Largest absolute value of an integer ``ref`` (exact in every JSON implementation)."""
MAX_REF_TEXT: Final = 64
"""Longest text ``ref``."""
MAX_EPOCH_MS: Final = 2**53 - 1
"""Largest timestamp (milliseconds since the Unix epoch, server clock)."""
MAX_RETRY_AFTER_MS: Final = 60_000
"""Longest wait an ``error`` may ask for before the same request is sent again."""
MAX_NAME: Final = 24
"""Longest display name, after stripping surrounding spaces."""
MAX_BAN_REASON: Final = 500
"""Longest reason of a ban, as ``welcome`` carries it."""
ROOM_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""The letters of room codes: no 0/O, 1/I/L to confuse."""
ROOM_CODE_LENGTH: Final = 6
"""Length of a room code."""
MAX_PLAYERS: Final = 8
"""Most players in one room or race."""
MAX_RACERS: Final = MAX_PLAYERS + 1
"""Most racers in one game: a race of 8, or a challenge's taker and its 8 ghosts."""
GAME_ID_PATTERN: Final = r"[A-Za-z0-9_-]{1,32}"
"""What a game id (and every other id on the wire) looks like, as a regular expression."""
GAME_ID_TEXT: Final = "1 to 32 letters, digits, '-' or '_'"
"""The same, in words."""
MAX_COLUMNS: Final = max(v.columns for v in VARIANTS.values())
"""Most tableau columns of any variant (moves' ``from``/``to`` are at most this)."""
MAX_CELLS: Final = max(v.cells for v in VARIANTS.values())
"""Most open reserve cells of any variant (``R1``, ``R2``)."""
MAX_LIST: Final = 1000
"""Longest list a server message carries (games, events of a batch, moves of a replay)."""
GAME_MODES: Final = ("race", "solo", "daily", "practice", "challenge")
"""What a game is: a race of 2-8, a solo game, a ranked daily attempt, unranked daily practice,
or a challenge (a deal raced against recorded runs, unrated)."""
VERDICTS: Final = ("winnable", "unwinnable", "unknown")
"""What the solver says of a deal or position: a line exists, none does, or undecided."""
RACER_STATUSES: Final = ("playing", "finished", "stuck", "resigned", "left")
"""Where a racer stands: still playing, won the deal, no move left, gave up, disconnected for good."""


def _whole(regex: str) -> str:
    r"""Return ``regex`` anchored at both ends (msgspec searches; ``\Z`` refuses a final newline)."""
    return rf"^(?:{regex})\Z"


# ---------------------------------------------------------------- field types
# Each names one kind of value of the contract, with its limits; PATTERN_WORDS says each
# pattern in words for the error a client gets.

Id = Annotated[str, Meta(pattern=_whole(GAME_ID_PATTERN))]
Token = Annotated[str, Meta(pattern=_whole(r"[A-Za-z0-9_-]{16,128}"))]
Version = Annotated[int, Meta(ge=0, le=MAX_VERSION)]
Epoch = Annotated[int, Meta(ge=0, le=MAX_EPOCH_MS)]
Count = Annotated[int, Meta(ge=0, le=MAX_VERSION)]
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]
RoomCode = Annotated[str, Meta(pattern=_whole(f"[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}}"))]


def _one_of(values: tuple[str, ...]) -> str:
    """Return the pattern of exactly one of ``values`` (typed ``str`` in Python, checked on decode)."""
    return _whole("|".join(re.escape(v) for v in values))


Variant = Annotated[str, Meta(pattern=_one_of(tuple(VARIANTS)))]
ReserveRuleName = Annotated[str, Meta(pattern=_one_of(tuple(r.value for r in ReserveRule)))]
RacerStatus = Annotated[str, Meta(pattern=_one_of(RACER_STATUSES))]
GameMode = Annotated[str, Meta(pattern=_one_of(GAME_MODES))]
Verdict = Annotated[str, Meta(pattern=_one_of(VERDICTS))]
Hex64 = Annotated[str, Meta(pattern=_whole(r"[0-9a-f]{64}"))]
Salt = Annotated[str, Meta(pattern=_whole(r"[0-9a-f]{32,64}"))]
DealNumber = Annotated[str, Meta(pattern=_whole(r"[1-9][0-9]{0,19}"))]
Date = Annotated[str, Meta(pattern=_whole(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"))]
TypeName = Annotated[str, Meta(pattern=_whole(r"[a-z_]{1,32}"))]
Rating = Annotated[int, Meta(ge=0, le=10_000)]
Deviation = Annotated[int, Meta(ge=0, le=350)]
Score = Annotated[int, Meta(ge=0, le=10**6)]
Rank = Annotated[int, Meta(ge=1, le=MAX_VERSION)]
Place = Annotated[int, Meta(ge=1, le=MAX_RACERS)]
Column = Annotated[int, Meta(ge=1, le=MAX_COLUMNS)]
RoomCodeIn = Annotated[str, Meta(pattern=_whole(f"(?i:[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}})"))]
CellName = Annotated[str, Meta(pattern=_whole(f"[Rr][1-{MAX_CELLS}]"))]
CardName = Annotated[str, Meta(pattern=_whole(r"[2-9TJQKAtjqka][SHDCshdc]"))]
RefValue = Annotated[int, Meta(ge=-MAX_REF, le=MAX_REF)] | Annotated[str, Meta(max_length=MAX_REF_TEXT)]
PlainMoves = Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)]
Times = Annotated[tuple[Epoch, ...], Meta(max_length=MAX_LIST)]

PATTERN_WORDS: Final = {
    **{
        _one_of(values): "one of " + ", ".join(values)
        for values in (
            tuple(VARIANTS),
            tuple(r.value for r in ReserveRule),
            RACER_STATUSES,
            GAME_MODES,
            VERDICTS,
        )
    },
    _whole(GAME_ID_PATTERN): GAME_ID_TEXT,
    _whole(r"[A-Za-z0-9_-]{16,128}"): "16 to 128 letters, digits, '-' or '_'",
    _whole(f"[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}}"): f"{ROOM_CODE_LENGTH} characters from {ROOM_ALPHABET}",
    _whole(
        f"(?i:[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}})"
    ): f"{ROOM_CODE_LENGTH} characters from {ROOM_ALPHABET}",
    _whole(r"[0-9a-f]{64}"): "64 lowercase hexadecimal digits (a sha256)",
    _whole(r"[0-9a-f]{32,64}"): "32 to 64 lowercase hexadecimal digits",
    _whole(r"[1-9][0-9]{0,19}"): "a deal number written in decimal digits, 1 to 20 digits, no leading zero",
    _whole(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"): "a date written YYYY-MM-DD",
    _whole(r"[a-z_]{1,32}"): "a message type name",
    _whole(f"[Rr][1-{MAX_CELLS}]"): f"a column number or a reserve cell R1-R{MAX_CELLS}",
    _whole(
        r"[2-9TJQKAtjqka][SHDCshdc]"
    ): "a card such as '7H': a rank from A23456789TJQK, then a suit from SHDC",
}
"""Each pattern of the contract in words, for the errors clients get."""


def deal_commitment(number: int | str, salt: str) -> str:
    """Return the commitment to a secret deal: sha256 hex of the ASCII text ``"<number>:<salt>"``."""
    return hashlib.sha256(f"{number}:{salt}".encode("ascii")).hexdigest()


def _kept(value: Any) -> Any:
    """Return a field's default that the wire always carries.

    msgspec leaves out of a frame every field equal to its default (``omit_defaults``),
    which is what an absent optional field (``None``) needs; but the contract carries
    every field that has a value, defaults included (``"status": "playing"``), so a
    default other than ``None`` is given by a factory, which msgspec never omits.
    """
    return msgspec.field(default_factory=lambda: value)


def _bad(wire: str, why: str) -> ProtocolError:
    """Return the ``bad_field`` error refusing field ``wire`` (a path such as ``move.to``)."""
    return ProtocolError(ErrorCode.BAD_FIELD, f"field {wire!r} {why}", field=wire)


def check_date(value: str | None, wire: str) -> None:
    """Raise ``bad_field`` for a date of the right form that is not in the calendar (2024-13-01)."""
    if value is None:
        return
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise _bad(wire, f"must be a real date (YYYY-MM-DD), not {value!r}") from None


_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
"""Characters a renderer may draw as nothing: joiners, fillers (Hangul's among them),
variation selectors, invisible operators. Unicode's own property, not a hand list."""
_LETTER_OR_DIGIT = regex.compile(r"[\p{L}\p{N}]")


def _check_name(value: str, wire: str) -> str:
    """Return a display name without its outer spaces, or raise.

    A name is 1 to 24 printable characters, none of them default-ignorable (which would
    let "A\u034fB" pass for "AB", or a Hangul filler for a blank), with at least one
    letter or digit (so that a name of braille blanks or of marks alone is refused).
    """
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise _bad(wire, f"must be 1 to {MAX_NAME} characters after removing outer spaces")
    if not name.isprintable():
        raise _bad(wire, "must contain printable characters only (no control or invisible characters)")
    hidden = _IGNORABLE.search(name)
    if hidden is not None:
        code = f"U+{ord(hidden.group()):04X}"
        raise _bad(wire, f"must not contain characters that show as nothing ({code} does)")
    if _LETTER_OR_DIGIT.search(name) is None:
        raise _bad(wire, "must contain at least one letter or digit")
    return name
