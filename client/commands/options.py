"""Argument types the subcommands share: counts, budgets and waits are checked when the
command line is parsed, so that a bad value is refused with a message naming it rather
than running something that cannot mean anything (a negative budget, no deals at all,
a wait of NaN seconds)."""

from __future__ import annotations

import argparse
import math

__all__ = ["positive_int", "positive_seconds", "seconds"]


def positive_int(text: str) -> int:
    """An integer of at least 1 (a count of deals, workers or nodes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (a time budget)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds, 0 or more (a wait or a delay)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, not {text!r}")
    return value
