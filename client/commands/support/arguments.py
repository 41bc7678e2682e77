"""Argument types the subcommands share: counts, budgets and waits are checked when the
command line is parsed, so that a bad value is refused with a message naming it rather
than running something that cannot mean anything (a negative budget, no deals at all,
a wait of NaN seconds)."""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable

from protocol.wire.message import GAME_ID_PATTERN, GAME_ID_TEXT

__all__ = [
    "game_id",
    "half_the_memory",
    "int_between",
    "memory_size",
    "memory_text",
    "positive_int",
    "positive_seconds",
    "seconds",
]

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def positive_int(text: str) -> int:
    """An integer of at least 1 (a count of deals, workers or nodes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def int_between(low: int, high: int) -> Callable[[str], int]:
    """An argument type: a whole number from ``low`` to ``high`` (a page size, an offset)."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low} to {high}, not {value}")
        return value

    return check


def game_id(text: str) -> str:
    """A game id as the server writes them (checked here, before anything connects)."""
    if re.fullmatch(GAME_ID_PATTERN, text) is None:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise argparse.ArgumentTypeError(f"a game id is {GAME_ID_TEXT}, not {shown!r}")
    return text


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (a time budget)."""
    return _seconds(text, zero=False)


def seconds(text: str) -> float:
    """A finite number of seconds, 0 or more (a wait or a delay)."""
    return _seconds(text, zero=True)


def _seconds(text: str, *, zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        bound = ", 0 or more" if zero else " above 0"
        raise argparse.ArgumentTypeError(f"must be a number of seconds{bound}, not {text!r}")
    return value


def memory_size(text: str) -> int:
    """A number of bytes of at least 1M: ``800M``, ``4G``, ``1.5G``, ``65536K`` (powers of
    1024; a trailing ``B`` or ``iB`` allowed) or plain bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not match:
        raise argparse.ArgumentTypeError(f"not an amount of memory (like 800M or 4G): {text!r}")
    value = int(float(match[1]) * _UNITS[match[2]])
    if value < _UNITS["M"]:
        raise argparse.ArgumentTypeError(f"must be at least 1M, not {text!r}")
    return value


def memory_text(size: int) -> str:
    """``size`` bytes as the largest unit that keeps a number of at least 1 (``4.0G``)."""
    for unit in "TGMK":
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f}{unit}"
    return f"{size}B"


def half_the_memory() -> int | None:
    """Half this machine's physical memory in bytes, or None where it cannot be read."""
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page // 2 if pages > 0 and page > 0 else None
