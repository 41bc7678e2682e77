"""Benchmark the fair-play analysis: detection and false-positive rates on simulated players.

Usage: python bench/fairplay.py [--honest 400] [--cheaters 60] [--games 10] [--deals 40]
                                [--earlier 30] [--workers 2] [--seed 1] [--threshold T]
                                [--save FILE]

Every simulated player plays ``--games`` ranked games on known deals (a fixed list of
deal numbers drawn from a seeded generator: a test deal source, as ``--test-deals`` is for
the server, never a production one), and each game goes through the same pure analysis
the server runs after a ranked game (``protocol.fairplay.game_evidence``); no server is
needed. Every game is taken as a daily's ranked attempt, whose deal others have played
before: ``--earlier`` honest games by other players on each deal (their own skills) are
the earlier games the prior-play measure compares it with (for all kinds, so the honest
players' rate counts every chance match). Kinds of players:

- ``honest``: the bot of ``client/bot.py`` (visible information only), with a skill of its
  own (a share of moves picked among the other useful moves instead) and human-like move
  times (lognormal, a median of 1.5-6 s and a spread of 0.5-1.0 of its own);
- ``solver-P``: as honest, but follows the full-information solver's winning move on a
  share P of moves (0.1, 0.3, 0.5, 1.0);
- ``scout-P``: has played the day's deal before on a second account (a guest's practice
  or another account's ranked attempt, stored with the day's earlier games): up to three
  tries of its own honest play, until one wins. In its ranked attempt it plays, on a share
  P of moves (0.3, 1.0), what it knows: the move its winning try played in that position,
  or, off that line (or when no try won), the full-information solver's move, as it has
  seen the layout; the other moves as honest;
- ``replay-P``: as ``scout-P``, but all it uses is its winning try: on a share P of moves
  (1.0) in a position that try reached, its move there; everything else as honest
  (a player who remembers the line that won, not the cards);
- ``digger``: as honest, but knows where the face-down cards lie: when it digs, it digs
  the column whose face-down card is the most useful (and nothing else);
- ``bot``: the bot with machine-regular timing (0.7 s, +/- 5%).

It prints, per kind, the share of players flagged within 1, 5 and 10 games, and the share
of honest players flagged, against the goal (at least 95% of full cheaters and 80% of
p = 0.3 cheaters within 10 games, at most 0.5% of honest players), with the machine load.
``--save`` writes every game's measures (JSON) to weigh them again without playing.
Figures only: this script never asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client.bot import choose_move
from client.model import position_key
from protocol.fairplay import GAME_CAP, GAME_FLOOR, PLAYER_THRESHOLD, dig_values, game_evidence, player_score
from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, Board, Move, hint_scores, move_from_text, move_text
from protocol.solver import Budget, Verdict, solve, solve_deal

VARIANT, RULE = "scorpion", "any-time"
KINDS = (
    "honest",
    "solver-0.1",
    "solver-0.3",
    "solver-0.5",
    "solver-1.0",
    "scout-0.3",
    "scout-1.0",
    "replay-1.0",
    "digger",
    "bot",
)
SCOUT_TRIES = 3
MAX_MOVES = 300
_CACHE: dict[Any, bool | None] = {}
_EARLIER: dict[int, list[list[str]]] = {}
"""Each deal's earlier games by other players (set in every worker)."""


def load() -> str:
    """Return the machine's load (``/proc/loadavg``)."""
    return Path("/proc/loadavg").read_text().strip()


def known_deals(count: int, seed: int) -> list[int]:
    """Return ``count`` deal numbers, drawn from a seeded generator, of which most are winnable
    (three in four: a ranked race's deal may be lost from the start)."""
    rng = random.Random(seed)
    winnable: list[int] = []
    lost: list[int] = []
    while len(winnable) < count - count // 4 or len(lost) < count // 4:
        number = rng.randrange(COMPETITIVE_MIN, MAX_NUMBER + 1)
        verdict = solve_deal(VARIANT, number, RULE, Budget(nodes=200_000)).verdict
        if verdict is Verdict.WINNABLE and len(winnable) < count - count // 4:
            winnable.append(number)
        elif verdict is Verdict.UNWINNABLE and len(lost) < count // 4:
            lost.append(number)
    return winnable + lost


def honest_move(
    board: Board, seen: set[tuple[object, ...]], idle: int, rng: random.Random, slip: float
) -> Move | None:
    """The bot's move, or with probability ``slip`` another useful move (a weaker player)."""
    move = choose_move(board, seen, idle)
    if move is not None and rng.random() < slip:
        others = [m for m, value in hint_scores(board) if value >= 0 and not m.is_deal and m != move]
        if others:
            return rng.choice(others)
    return move


def play_game(
    kind: str,
    number: int,
    rng: random.Random,
    player: dict[str, float],
    known: dict[Any, Move] | None = None,
) -> tuple[list[str], list[int], bool]:
    """Play one game as ``kind`` and return its actions, their times (ms from the start) and
    whether it was won. ``known`` is a scout's winning line (position key -> its move)."""
    board = Board.new(VARIANT, number, RULE)
    seen: set[tuple[object, ...]] = set()
    idle = 0
    follow = float(kind.split("-")[1]) if "-" in kind else 0.0
    actions: list[str] = []
    times: list[int] = []
    clock = 0.0
    while len(actions) < MAX_MOVES and not board.is_won():
        seen.add(position_key(board))
        move = honest_move(board, seen, idle, rng, player["slip"])
        if follow and rng.random() < follow:
            if known is not None and board.key() in known:
                move = known[board.key()]
            elif not kind.startswith("replay-"):
                solution = solve(board, Budget(nodes=200_000))
                if solution.verdict is Verdict.WINNABLE and solution.moves:
                    move = solution.moves[0]
        if move is None:
            break
        if kind == "digger" and not move.is_deal:
            values = dig_values(board)
            if move in values:
                move = max(values, key=lambda m: values[m])
        scored = dict(hint_scores(board))
        idle = 0 if scored.get(move, 0) > 0 else idle + 1
        board.push(move)
        actions.append(move_text(move))
        if kind == "bot":
            clock += 700 * (1 + rng.uniform(-0.05, 0.05))
        else:
            clock += 1000 * player["median"] * math.exp(rng.gauss(0, player["spread"]))
        times.append(int(clock))
    return actions, times, board.is_won()


def scouting(
    number: int, rng: random.Random, player: dict[str, float]
) -> tuple[list[list[str]], dict[Any, Move] | None]:
    """A scout's earlier tries of a deal on a second account (honest play, up to
    ``SCOUT_TRIES``, until one wins) and the winning try's line (position key -> move)."""
    tries: list[list[str]] = []
    for _ in range(SCOUT_TRIES):
        actions, _times, won = play_game("honest", number, rng, player)
        tries.append(actions)
        if won:
            board, line = Board.new(VARIANT, number, RULE), {}
            for text in actions:
                move = move_from_text(text)
                line[board.key()] = move
                board.push(move)
            return tries, line
    return tries, None


def earlier_games(job: tuple[int, int]) -> tuple[int, list[str]]:
    """Play one honest game on a deal by another player (a daily's earlier game)."""
    number, seed = job
    rng = random.Random(seed)
    player = {"slip": rng.uniform(0.0, 0.3), "median": 3.0, "spread": 0.7}
    return number, play_game("honest", number, rng, player)[0]


def _set_earlier(earlier: dict[int, list[list[str]]]) -> None:
    _EARLIER.update(earlier)


Game = tuple[float, float, float, int, float, int]


def run_player(job: tuple[str, int, int, list[int]]) -> tuple[str, list[Game]]:
    """Play one simulated player's games and return their kind and, per game (in order), the
    score, the score without the prior-play measure, the prior-play score, the longest
    common opening with an earlier game (moves), the best match's log-likelihood ratio and
    the number of earlier games compared."""
    kind, seed, games, deals = job
    rng = random.Random(seed)
    player = {
        "slip": 0.0 if kind == "bot" else rng.uniform(0.0, 0.3),
        "median": rng.uniform(1.5, 6.0),
        "spread": rng.uniform(0.5, 1.0),
    }
    scores = []
    for _ in range(games):
        number = rng.choice(deals)
        earlier = list(_EARLIER.get(number, []))
        known = None
        if kind.startswith(("scout-", "replay-")):
            tries, known = scouting(number, rng, player)
            earlier += tries
        actions, times, _won = play_game(kind, number, rng, player, known)
        evidence = game_evidence(VARIANT, number, RULE, actions, times, cache=_CACHE, earlier=earlier)
        prior = evidence["prior"]["score"]
        alone = evidence["solver"]["score"] + evidence["digs"]["score"] + evidence["timing"]["score"]
        opening = max((common_opening(actions, other) for other in earlier), default=0)
        best, compared = evidence["prior"]["best"], evidence["prior"]["compared"]
        scores.append((evidence["score"], alone, prior, opening, best, compared))
    return kind, scores


def common_opening(actions: list[str], other: list[str]) -> int:
    """Return how many first moves two games share."""
    return next(
        (i for i, (a, b) in enumerate(zip(actions, other, strict=False)) if a != b),
        min(len(actions), len(other)),
    )


def flagged_within(scores: list[float], games: int, threshold: float) -> bool:
    """Tell whether a player was flagged after any of their first ``games`` games."""
    return any(player_score(scores[:n][::-1]) >= threshold for n in range(1, games + 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest", type=int, default=400)
    parser.add_argument("--cheaters", type=int, default=60, help="players of each cheating kind")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--earlier", type=int, default=30, help="earlier games by others on each deal")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=PLAYER_THRESHOLD)
    parser.add_argument("--save", help="write every game's measures to this file (JSON)")
    args = parser.parse_args(argv)
    print(f"load before: {load()}  (cpus: {os.cpu_count()})")
    started = time.perf_counter()
    deals = known_deals(args.deals, args.seed)
    earlier: dict[int, list[list[str]]] = {number: [] for number in deals}
    with Pool(args.workers) as pool:
        played = pool.map(
            earlier_games,
            [
                (n, args.seed * 7_000_003 + d * 104_729 + i)
                for d, n in enumerate(deals)
                for i in range(args.earlier)
            ],
            chunksize=4,
        )
    for number, actions in played:
        earlier[number].append(actions)
    jobs = [
        (kind, args.seed * 1_000_003 + index * 7919 + k, args.games, deals)
        for k, kind in enumerate(KINDS)
        for index in range(args.honest if kind == "honest" else args.cheaters)
    ]
    with Pool(args.workers, initializer=_set_earlier, initargs=(earlier,)) as pool:
        results = pool.map(run_player, jobs, chunksize=4)
    by_kind: dict[str, list[list[Game]]] = {kind: [] for kind in KINDS}
    for kind, games in results:
        by_kind[kind].append(games)
    if args.save:
        Path(args.save).write_text(json.dumps(by_kind))
    honest_scores = sorted(g[0] for games in by_kind["honest"] for g in games)
    print(
        f"{len(deals)} known deals, {args.earlier} earlier games on each, {args.games} games a player, "
        f"threshold {args.threshold}"
    )
    print(
        f"{'kind':<12}{'players':>8}{'1 game':>9}{'5 games':>9}{'10 games':>10}{'mean game score':>17}"
        f"{'w/o prior, 10':>15}{'mean prior':>12}{'opening':>9}"
    )
    for kind in KINDS:
        players = by_kind[kind]
        scores = [[g[0] for g in games] for games in players]
        alone = [[max(GAME_FLOOR, min(GAME_CAP, g[1])) for g in games] for games in players]
        shares = [
            sum(flagged_within(s, n, args.threshold) for s in scores) / max(1, len(players))
            for n in (1, 5, args.games)
        ]
        without = sum(flagged_within(s, args.games, args.threshold) for s in alone) / max(1, len(players))
        count = max(1, sum(len(s) for s in scores))
        mean = sum(sum(s) for s in scores) / count
        prior = sum(g[2] for games in players for g in games) / count
        opening = sum(g[3] for games in players for g in games) / count
        print(
            f"{kind:<12}{len(players):>8}{shares[0]:>9.1%}{shares[1]:>9.1%}{shares[2]:>10.1%}{mean:>17.2f}"
            f"{without:>15.1%}{prior:>12.2f}{opening:>9.1f}"
        )
    cut = honest_scores[int(0.99 * (len(honest_scores) - 1))] if honest_scores else 0.0
    top = honest_scores[-1] if honest_scores else 0.0
    print(f"honest game scores: 99th percentile {cut:.2f}, max {top:.2f}")
    priors = sorted(g[2] for games in by_kind["honest"] for g in games)
    openings = sorted(g[3] for games in by_kind["honest"] for g in games)
    if priors:
        nonzero = sum(1 for p in priors if p > 0) / len(priors)
        print(
            f"honest prior-play scores: {nonzero:.1%} of games above 0, 99th percentile "
            f"{priors[int(0.99 * (len(priors) - 1))]:.2f}, max {priors[-1]:.2f}; common opening with an "
            f"earlier game: median {openings[len(openings) // 2]}, 99th percentile "
            f"{openings[int(0.99 * (len(openings) - 1))]}, max {openings[-1]} moves"
        )
    print("goal: solver-1.0 >= 95%, solver-0.3 >= 80% within 10 games; honest <= 0.5%")
    print(f"{time.perf_counter() - started:.0f} s; load after: {load()}")


if __name__ == "__main__":
    main()
