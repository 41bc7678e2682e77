"""Fair-play evidence: how a ranked game was played, against what the player could see.

Pure functions of a racer's stored actions and move times (no clock, no chance): the server
runs :func:`game_evidence` in its solver worker after every rated race and ranked daily
attempt, and ``bench/fairplay.py`` runs it on simulated players to set the thresholds.

Three measures, each a log-likelihood ratio (cheating against honest play), summed into the
game's score (decision 16):

- **solver**: at every position still winnable where the hint heuristic's first choice (the
  best a player can do from what they see by that rule) is not the full-information solver's
  first move, did the racer play the solver's move? An honest player does so only when they
  leave the hint's choice, and then picks among the other useful moves: the chance is the
  racer's own rate of leaving the hint's choice *where the solver agrees with it* (measured
  in the same game, drawn toward ``LEAVE_PRIOR``), shared among the other useful moves. A
  racer who follows a solver on a share of moves leaves the hint exactly where the solver
  differs, and seldom elsewhere. The positions where the hint's choice loses a winnable deal
  (**critical**) are counted for the operator, not scored again: they are solver positions.
- **digs**: when two or more moves would each turn a face-down card up, did the racer pick
  the one under which lies the most useful card (the best hint score after it is turned)?
  From what is visible every such choice is a guess, right with the share of best options.
- **timing**: how regular the times between moves are (the coefficient of variation); a
  human's vary widely (about 0.5 and up), a program's hardly at all. Very fast and regular
  play scores most.
- **prior play** (the daily only: its deal is the same for everyone all day): does the game
  follow an earlier game on the same deal by another player (the day's ranked attempts and
  guests' practice)? Where that game left the hint's first choice, did the racer make the
  same choice? An honest player does so with their own rate of leaving the hint, shared by
  how the day's other players chose there; a scout who replays a line learned on a second
  account does so on a share of moves. The best match over the earlier games counts, less
  the log of how many were compared (so that many games to compare against do not make a
  match by chance) and a margin, and never below 0: not matching anyone says nothing.

A player's score is the sum of their last ``PLAYER_GAMES`` ranked games' scores, each held
to ``[GAME_FLOOR, GAME_CAP]`` so that neither one clean game hides a pattern nor one odd game
makes one; over ``PLAYER_THRESHOLD`` the player goes to the review queue. The constants are
set from ``bench/fairplay.py``'s populations (docs/performance.md has the figures).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, cast

from .game import Board, hint_scores, move_from_text
from .game.move import Move
from .solver import Budget, Verdict, solve

__all__ = [
    "AGREE_CEIL",
    "AGREE_CHEAT",
    "AGREE_FLOOR",
    "DIG_HIT_CHEAT",
    "GAME_CAP",
    "GAME_FLOOR",
    "LEAVE_PRIOR",
    "LEAVE_WEIGHT",
    "PLAYER_GAMES",
    "PLAYER_THRESHOLD",
    "PRIOR_CHEAT",
    "PRIOR_MARGIN",
    "REGULAR_CV",
    "dig_values",
    "flagged",
    "game_evidence",
    "player_score",
    "timing_score",
]

LEAVE_PRIOR = 0.15
"""How often a player leaves the hint's first choice, before their own game says (a weak
player's share; the bot's is 0)."""
LEAVE_WEIGHT = 10.0
"""How many positions of the game's own the prior counts as."""
AGREE_FLOOR = 0.02
"""The least chance taken for playing the solver's move from what is visible (also when the
hint sees no other useful move: the solver's is one that looks harmful, or the stock)."""
AGREE_CEIL = 0.5
"""The most chance taken for playing the solver's move from what is visible."""
AGREE_CHEAT = 0.3
"""The share of moves on which the solver measure's cheater follows the solver, on top of
the honest chance."""
PRIOR_CHEAT = 0.5
"""The share of moves on which the prior-play measure's scout replays an earlier game's line,
on top of the honest chance."""
PRIOR_MARGIN = 2.0
"""Taken off the prior-play measure's best match (after the log of the number of games
compared): a game scores only a match well past chance, as a game's score of 0 or more adds
up over the player's games (set on the benchmark's tuning populations)."""
DIG_HIT_CHEAT = 0.6
"""How often the digs measure assumes a racer who knows the face-down cards picks the best."""
REGULAR_CV = 0.3
"""Move times varying less than this (coefficient of variation) count as machine-regular."""
TIMING_WEIGHT = 10.0
"""The timing score of perfectly regular, very fast play over a whole game."""
MIN_INTERVALS = 10
"""Fewer times between moves than this say nothing of their regularity."""
GAME_CAP = 8.0
GAME_FLOOR = -2.0
PLAYER_GAMES = 10
"""A player's score covers their last this many ranked games."""
PLAYER_THRESHOLD = 6.0
"""A player whose score reaches this goes to the review queue."""
NODES = 200_000
"""Search budget per position: most positions are decided in far fewer nodes."""


def _solved(board: Board, nodes: int, cache: dict[Any, Any] | None) -> tuple[bool | None, Move | None]:
    """Return whether ``board`` can be won (``None``: undecided) and the solver's first move."""
    key = board.key()
    if cache is not None and key in cache:
        return cast(tuple[bool | None, Move | None], cache[key])
    solution = solve(board, Budget(nodes=nodes))
    verdict = solution.verdict
    answer = (
        None if verdict is Verdict.UNKNOWN else verdict is Verdict.WINNABLE,
        solution.moves[0] if verdict is Verdict.WINNABLE and solution.moves else None,
    )
    if cache is not None:
        cache[key] = answer
    return answer


def _winnable(board: Board, nodes: int, cache: dict[Any, Any] | None) -> bool | None:
    return _solved(board, nodes, cache)[0]


def dig_values(board: Board) -> dict[Move, int]:
    """Return, for each move that would turn a face-down card up, the value of what it turns
    up: the best hint score of the position after it (read with the card now known)."""
    down = board.face_down_left
    values: dict[Move, int] = {}
    for move in board.legal_moves():
        if move.is_deal:
            continue
        board.push(move)
        if board.face_down_left < down:
            scores = [value for after, value in hint_scores(board) if not after.is_deal]
            values[move] = max(scores, default=0)
        board.pop()
    return values


def timing_score(times: Sequence[int]) -> tuple[float, float | None, int | None]:
    """Return the timing score, the coefficient of variation and the median gap (ms) of a
    racer's move times (ms from the start, one a move)."""
    gaps = [b - a for a, b in itertools.pairwise(times)]
    if len(gaps) < MIN_INTERVALS:
        return 0.0, None, None
    mean = sum(gaps) / len(gaps)
    median = sorted(gaps)[len(gaps) // 2]
    if mean <= 0:
        return TIMING_WEIGHT, 0.0, median
    spread = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (len(gaps) - 1))
    cv = spread / mean
    regular = max(0.0, (REGULAR_CV - cv) / REGULAR_CV)
    fast = 1.0 if median < 1000 else 0.75
    return TIMING_WEIGHT * regular * fast, round(cv, 3), median


def game_evidence(
    variant: str,
    number: int,
    rule: str,
    actions: Sequence[str],
    times: Sequence[int],
    nodes: int = NODES,
    cache: dict[Any, Any] | None = None,
    earlier: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """Return one racer's fair-play evidence for a finished game as plain data.

    ``actions`` are the stored actions (moves, ``undo`` markers), ``times`` the moves' times
    in ms from the start (one per action; missing ones are taken as unknown). ``cache``
    (position key -> winnable) may be shared between calls on the same deals. ``earlier``
    are the actions of other players' games on the same deal (a daily's), for the prior-play
    measure.
    """
    lines = [_line(variant, number, rule, other) for other in earlier]
    matches: list[list[tuple[bool, int, float]]] = [[] for _ in lines]  # (same choice, index, share)
    board = Board.new(variant, number, rule)
    telling: list[tuple[bool, int, int]] = []  # (played the solver's move, index, other useful moves)
    critical = _Count()
    agreed = left = 0  # positions where the solver agrees with the hint; the hint's choice left
    digs = 0
    dig_at: list[int] = []
    dig_chance = dig_llr = 0.0
    winnable: bool | None = None
    for index, text in enumerate(actions):
        if text == "undo":
            if board.depth:
                board.pop()
            winnable = None
            continue
        move = move_from_text(text)
        choice: Move | None = None
        if winnable is not False:
            winnable, choice = _solved(board, nodes, cache)
        ranked = hint_scores(board)
        if lines and ranked:
            _match(board.key(), move, ranked, lines, matches, index)
        values = dig_values(board)
        if move in values and len(values) >= 2:
            top = max(values.values())
            chance = sum(1 for v in values.values() if v == top) / len(values)
            if chance < 1.0:
                digs += 1
                dig_chance += chance
                hit = values[move] == top
                best = DIG_HIT_CHEAT + (1 - DIG_HIT_CHEAT) * chance
                dig_llr += math.log(best / chance) if hit else math.log((1 - best) / (1 - chance))
                if hit:
                    dig_at.append(index)
        if winnable and ranked and choice is not None:
            hint = ranked[0][0]
            if hint == choice:
                agreed += 1
                left += move != hint
            else:
                others = sum(1 for m, value in ranked[1:] if value >= 0 and not m.is_deal)
                telling.append((move == choice, index, others))
                board.push(hint)
                hint_keeps = _winnable(board, nodes, cache)
                board.pop()
                if hint_keeps is False:
                    board.push(move)
                    keeps = move != hint and _winnable(board, nodes, cache)
                    board.pop()
                    if keeps is not None:
                        critical.add(bool(keeps), index)
        board.push(move)
    leave = (left + LEAVE_WEIGHT * LEAVE_PRIOR) / (agreed + LEAVE_WEIGHT)
    solver = _Count()
    for hit, index, others in telling:
        chance = leave / others if others else 0.0
        solver.add(hit, index, min(AGREE_CEIL, max(AGREE_FLOOR, chance)), AGREE_CHEAT)
    prior = _prior(matches, leave)
    timing, cv, median = timing_score([t for t in times if t is not None])
    score = _clip(solver.llr + dig_llr + timing + prior["score"])
    return {
        "score": round(score, 3),
        "solver": {**solver.as_dict(), "leaves_hint": round(leave, 3)},
        "critical": critical.as_dict(),
        "digs": {
            "choices": digs,
            "best": len(dig_at),
            "expected": round(dig_chance, 2),
            "score": round(dig_llr, 3),
            "moves": dig_at,
        },
        "timing": {"cv": cv, "median_ms": median, "score": round(timing, 3)},
        "prior": prior,
        "moves": len(actions),
    }


def _line(variant: str, number: int, rule: str, actions: Sequence[str]) -> dict[Any, Move]:
    """Return the move an earlier game played at each position it reached (the last one, if it
    came back there through undo)."""
    board = Board.new(variant, number, rule)
    line: dict[Any, Move] = {}
    for text in actions:
        if text == "undo":
            if board.depth:
                board.pop()
            continue
        move = move_from_text(text)
        line[board.key()] = move
        board.push(move)
    return line


def _match(
    key: Any,
    move: Move,
    ranked: Sequence[tuple[Move, int]],
    lines: Sequence[dict[Any, Move]],
    matches: list[list[tuple[bool, int, float]]],
    index: int,
) -> None:
    """Note, for each earlier game that left the hint's first choice at this position, whether
    the racer made the same choice, and how the other earlier games that left it there chose
    (the share an honest player's choice is taken to fall on that move)."""
    hint = ranked[0][0]
    left = [(g, line[key]) for g, line in enumerate(lines) if key in line and line[key] != hint]
    if not left:
        return
    others = max(1, sum(1 for m, value in ranked[1:] if value >= 0 and not m.is_deal))
    for g, choice in left:
        same = sum(1 for h, other in left if h != g and other == choice)
        share = (same + 1) / (len(left) - 1 + others)
        matches[g].append((move == choice, index, share))


def _prior(matches: Sequence[Sequence[tuple[bool, int, float]]], leave: float) -> dict[str, Any]:
    """Score the best match of the racer's game against the earlier games on the deal
    (``match``: its index among them)."""
    compared = 0
    best: _Count | None = None
    match: int | None = None
    for at, positions in enumerate(matches):
        if not positions:
            continue
        compared += 1
        count = _Count()
        for hit, index, share in positions:
            count.add(hit, index, min(AGREE_CEIL, max(AGREE_FLOOR, leave * share)), PRIOR_CHEAT)
        if best is None or count.llr > best.llr:
            best, match = count, at
    score = max(0.0, best.llr - math.log(compared) - PRIOR_MARGIN) if best is not None else 0.0
    found = best.as_dict() if best is not None else {"positions": 0, "hits": 0, "score": 0.0, "moves": []}
    found["best"] = found.pop("score")
    return {**found, "match": match, "games": len(matches), "compared": compared, "score": round(score, 3)}


class _Count:
    """Positions of one kind and how often the racer did what a cheater would, with the
    log-likelihood ratio of it when the chances are given."""

    def __init__(self) -> None:
        self.seen = 0
        self.llr = 0.0
        self.at: list[int] = []

    def add(self, hit: bool, index: int, honest: float | None = None, share: float = 0.0) -> None:
        """Count a position: ``hit`` if the racer did what a cheater would, which an honest
        player does with probability ``honest`` and a cheater who does it on a ``share`` of
        moves with ``share + (1 - share) * honest`` (no score if ``honest`` is not given)."""
        self.seen += 1
        if hit:
            self.at.append(index)
        if honest is None:
            return
        cheat = share + (1 - share) * honest
        self.llr += math.log(cheat / honest) if hit else math.log((1 - cheat) / (1 - honest))

    def as_dict(self) -> dict[str, Any]:
        return {"positions": self.seen, "hits": len(self.at), "score": round(self.llr, 3), "moves": self.at}


def _clip(score: float) -> float:
    return max(GAME_FLOOR, min(GAME_CAP, score))


def player_score(game_scores: Sequence[float]) -> float:
    """Return a player's score from their ranked games' scores, newest first."""
    return round(sum(_clip(s) for s in game_scores[:PLAYER_GAMES]), 3)


def flagged(game_scores: Sequence[float], threshold: float = PLAYER_THRESHOLD) -> bool:
    """Tell whether a player with these game scores (newest first) goes to review."""
    return player_score(game_scores) >= threshold
