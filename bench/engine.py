#!/usr/bin/env python3
"""Benchmark of the rules engine on one core; prints figures, never asserts.

Measures, on mid-game positions collected from seeded random playouts (10 to 40 moves into
games of every variant):

- legal-move generation, in positions per second;
- ``push`` + ``pop`` pairs per second (every legal move of every position);
- rebuilding a 200-move game from its deal and move list with ``Game.rebuild`` (every
  move validated), mean and 99th percentile in milliseconds.

Targets: >= 50,000 positions/s, >= 100,000 push+pop pairs/s, <= 2 ms per rebuild.

Usage, from the repository root::

    python3 bench/engine.py [--seed N] [--positions N] [--games N] [--cpu N]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.game import VARIANTS, Board, Game, Move  # noqa: E402

TARGET_POSITIONS = 50_000
TARGET_PAIRS = 100_000
TARGET_REBUILD_MS = 2.0
REBUILD_LENGTH = 200


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pin_to_one_core(cpu: int | None) -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    allowed = sorted(os.sched_getaffinity(0))
    chosen = cpu if cpu is not None else allowed[-1]
    os.sched_setaffinity(0, {chosen})
    return f"pinned to CPU {chosen} (of {len(allowed)} allowed)"


def collect_positions(count: int, seed: int) -> list[Board]:
    """Return ``count`` positions 10 to 40 moves into seeded random games of every variant."""
    rng = random.Random(seed)
    variants = sorted(VARIANTS)
    positions: list[Board] = []
    while len(positions) < count:
        variant = variants[len(positions) % len(variants)]
        board = Board.new(variant, rng.randrange(1, 10**20), rng.choice(("any-time", "when-stuck")))
        depth = rng.randrange(10, 41)
        for _ in range(depth):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        if len(board.move_stack) == depth and board.legal_moves():
            positions.append(board.copy(stack=False))
    return positions


def long_games(count: int, seed: int) -> list[tuple[str, int, list[Move]]]:
    """Return ``count`` games of exactly 200 legal moves (Wasp: random Scorpion playouts
    get stuck long before 200 moves, Wasp's any-card empty columns keep games going)."""
    rng = random.Random(seed)
    games: list[tuple[str, int, list[Move]]] = []
    while len(games) < count:
        number = rng.randrange(1, 10**20)
        board = Board.new("wasp", number)
        while len(board.move_stack) < REBUILD_LENGTH:
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        if len(board.move_stack) == REBUILD_LENGTH:
            games.append(("wasp", number, board.move_stack))
    return games


def rate(work: Callable[[], int], seconds: float) -> float:
    """Run ``work`` (which returns how many units it did) for about ``seconds``; return units/s."""
    done = 0
    gc.collect()
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        done += work()
        elapsed = time.perf_counter() - start
    return done / elapsed


def best_of(runs: int, work: Callable[[], int], seconds: float) -> tuple[float, float]:
    rates = [rate(work, seconds) for _ in range(runs)]
    return max(rates), statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the Scorpion rules engine on one core.")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--positions", type=int, default=400)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the last allowed)")
    parser.add_argument("--seconds", type=float, default=1.0, help="duration of each timed run")
    args = parser.parse_args(argv)

    pinned = pin_to_one_core(args.cpu)
    load_before = os.getloadavg()
    print("Scorpion engine benchmark")
    print(f"  machine : {cpu_model()}, {os.cpu_count()} logical CPUs, {pinned}")
    print(
        f"  python  : {platform.python_implementation()} {platform.python_version()} on {platform.system()}"
    )
    print(f"  load    : {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} (1/5/15 min, before)")

    positions = collect_positions(args.positions, args.seed)
    moves_total = sum(len(board.legal_moves()) for board in positions)
    print(
        f"  sample  : {len(positions)} positions 10-40 moves into seeded random games of every variant,"
        f" {moves_total / len(positions):.1f} legal moves each on average"
    )

    def generate() -> int:
        for board in positions:
            board.legal_moves()
        return len(positions)

    pairs_each = [(board, board.legal_moves()) for board in positions]

    def push_pop() -> int:
        done = 0
        for board, moves in pairs_each:
            push, pop = board.push, board.pop
            for move in moves:
                push(move)
                pop()
            done += len(moves)
        return done

    best, median = best_of(5, generate, args.seconds)
    verdict = "met" if median >= TARGET_POSITIONS else "MISSED"
    print(
        f"  legal_moves : {best:>10,.0f} positions/s (median of 5 runs {median:,.0f});"
        f" target >= {TARGET_POSITIONS:,} -> {verdict}"
    )
    best, median = best_of(5, push_pop, args.seconds)
    verdict = "met" if median >= TARGET_PAIRS else "MISSED"
    print(
        f"  push+pop    : {best:>10,.0f} pairs/s     (median of 5 runs {median:,.0f});"
        f" target >= {TARGET_PAIRS:,} -> {verdict}"
    )

    games = long_games(args.games, args.seed)
    samples: list[float] = []
    for _ in range(20):
        for variant, number, moves in games:
            start = time.perf_counter()
            Game.rebuild(variant, number, moves)
            samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    mean = statistics.fmean(samples)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(
        f"  rebuild     : mean {mean:.3f} ms, p99 {p99:.3f} ms, max {samples[-1]:.3f} ms over {len(samples)}"
        f" rebuilds of {len(games)} different {REBUILD_LENGTH}-move games; target <= {TARGET_REBUILD_MS} ms"
        f" -> {'met' if p99 <= TARGET_REBUILD_MS else 'MISSED'}"
    )

    load_after = os.getloadavg()
    print(f"  load    : {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} (1/5/15 min, after)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
