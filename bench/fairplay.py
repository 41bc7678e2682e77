"""Benchmark the fair-play analysis: detection and false-positive rates on simulated players.

Usage: python bench/fairplay.py [--honest 400] [--cheaters 60] [--games 10] [--deals 40]
                                [--workers 2] [--seed 1] [--threshold T]

Every simulated player plays ``--games`` ranked games on known deals (a fixed list of
deal numbers drawn from a seeded generator: a test deal source, as ``--test-deals`` is for
the server, never a production one), and each game goes through the same pure analysis
the server runs after a ranked game (``protocol.fairplay.game_evidence``); no server is
needed. Kinds of players:

- ``honest``: the bot of ``client/bot.py`` (visible information only), with a skill of its
  own (a share of moves picked among the other useful moves instead) and human-like move
  times (lognormal, a median of 1.5-6 s and a spread of 0.5-1.0 of its own);
- ``solver-P``: as honest, but follows the full-information solver's winning move on a
  share P of moves (0.1, 0.3, 0.5, 1.0);
- ``scout``: as honest, but has played the deal before: when it digs, it digs the column
  whose face-down card is the most useful;
- ``bot``: the bot with machine-regular timing (0.7 s, +/- 5%).

It prints, per kind, the share of players flagged within 1, 5 and 10 games, and the share
of honest players flagged, against the goal (at least 95% of full cheaters and 80% of
p = 0.3 cheaters within 10 games, at most 0.5% of honest players), with the machine load.
Figures only: this script never asserts.
"""

from __future__ import annotations

import argparse
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
from protocol.fairplay import PLAYER_THRESHOLD, dig_values, game_evidence, player_score
from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, Board, Move, hint_scores, move_text
from protocol.solver import Budget, Verdict, solve, solve_deal

VARIANT, RULE = "scorpion", "any-time"
KINDS = ("honest", "solver-0.1", "solver-0.3", "solver-0.5", "solver-1.0", "scout", "bot")
MAX_MOVES = 300
_CACHE: dict[Any, bool | None] = {}


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
    kind: str, number: int, rng: random.Random, player: dict[str, float]
) -> tuple[list[str], list[int]]:
    """Play one game as ``kind`` and return its actions and their times (ms from the start)."""
    board = Board.new(VARIANT, number, RULE)
    seen: set[tuple[object, ...]] = set()
    idle = 0
    follow = float(kind.split("-")[1]) if kind.startswith("solver-") else 0.0
    actions: list[str] = []
    times: list[int] = []
    clock = 0.0
    while len(actions) < MAX_MOVES and not board.is_won():
        seen.add(position_key(board))
        move = honest_move(board, seen, idle, rng, player["slip"])
        if follow and rng.random() < follow:
            solution = solve(board, Budget(nodes=200_000))
            if solution.verdict is Verdict.WINNABLE and solution.moves:
                move = solution.moves[0]
        if move is None:
            break
        if kind == "scout" and not move.is_deal:
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
    return actions, times


def run_player(job: tuple[str, int, int, list[int]]) -> tuple[str, list[float]]:
    """Play one simulated player's games and return their kind and game scores (in order)."""
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
        actions, times = play_game(kind, number, rng, player)
        scores.append(game_evidence(VARIANT, number, RULE, actions, times, cache=_CACHE)["score"])
    return kind, scores


def flagged_within(scores: list[float], games: int, threshold: float) -> bool:
    """Tell whether a player was flagged after any of their first ``games`` games."""
    return any(player_score(scores[:n][::-1]) >= threshold for n in range(1, games + 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest", type=int, default=400)
    parser.add_argument("--cheaters", type=int, default=60, help="players of each cheating kind")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=PLAYER_THRESHOLD)
    args = parser.parse_args(argv)
    print(f"load before: {load()}  (cpus: {os.cpu_count()})")
    started = time.perf_counter()
    deals = known_deals(args.deals, args.seed)
    jobs = [
        (kind, args.seed * 1_000_003 + index * 7919 + k, args.games, deals)
        for k, kind in enumerate(KINDS)
        for index in range(args.honest if kind == "honest" else args.cheaters)
    ]
    with Pool(args.workers) as pool:
        results = pool.map(run_player, jobs, chunksize=4)
    by_kind: dict[str, list[list[float]]] = {kind: [] for kind in KINDS}
    for kind, scores in results:
        by_kind[kind].append(scores)
    honest_scores = sorted(s for scores in by_kind["honest"] for s in scores)
    print(f"{len(deals)} known deals, {args.games} games a player, threshold {args.threshold}")
    print(f"{'kind':<12}{'players':>8}{'1 game':>9}{'5 games':>9}{'10 games':>10}{'mean game score':>17}")
    for kind in KINDS:
        players = by_kind[kind]
        shares = [
            sum(flagged_within(s, n, args.threshold) for s in players) / max(1, len(players))
            for n in (1, 5, args.games)
        ]
        mean = sum(sum(s) for s in players) / max(1, sum(len(s) for s in players))
        print(f"{kind:<12}{len(players):>8}{shares[0]:>9.1%}{shares[1]:>9.1%}{shares[2]:>10.1%}{mean:>17.2f}")
    cut = honest_scores[int(0.99 * (len(honest_scores) - 1))] if honest_scores else 0.0
    top = honest_scores[-1] if honest_scores else 0.0
    print(f"honest game scores: 99th percentile {cut:.2f}, max {top:.2f}")
    print("goal: solver-1.0 >= 95%, solver-0.3 >= 80% within 10 games; honest <= 0.5%")
    print(f"{time.perf_counter() - started:.0f} s; load after: {load()}")


if __name__ == "__main__":
    main()
