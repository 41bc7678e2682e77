"""The documented scoring: 100 a finished run; on a win, 500 plus a time bonus."""

from __future__ import annotations

__all__ = ["RUN_POINTS", "TIME_BONUS_MAX", "WIN_POINTS", "score", "time_bonus"]

RUN_POINTS = 100
WIN_POINTS = 500
TIME_BONUS_MAX = 1200


def time_bonus(elapsed_seconds: int) -> int:
    """Return the time bonus for a win after ``elapsed_seconds`` whole seconds."""
    if isinstance(elapsed_seconds, bool) or not isinstance(elapsed_seconds, int):
        raise TypeError("elapsed time is a whole number of seconds")
    if elapsed_seconds < 0:
        raise ValueError("elapsed time cannot be negative")
    return max(0, TIME_BONUS_MAX - elapsed_seconds)


def score(runs: int, won: bool, elapsed_seconds: int) -> int:
    """Return the score of a game with ``runs`` finished runs, ``won`` or not.

    The time is passed in: the engine never reads a clock.
    """
    if not 0 <= runs <= 4:
        raise ValueError(f"a game has 0 to 4 runs, not {runs}")
    total = RUN_POINTS * runs
    if won:
        total += WIN_POINTS + time_bonus(elapsed_seconds)
    return total
