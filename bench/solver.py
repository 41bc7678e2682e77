"""Benchmark the solver: nodes per second and solve-time percentiles per variant.

Usage: python bench/solver.py [--deals 1000] [--budget-seconds 10] [--variants ...] [--rules ...]
                              [--cpu-clock]

The deal numbers come from ``random.Random(seed)`` over PySolFC's large range, so every
run measures the same deals. Figures only: this script never asserts. The machine load
(``os.getloadavg()``) is printed before and after each row, since it skews the times.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, VARIANTS, ReserveRule
from protocol.solver import Budget, Verdict, percentile, search, solve_deal, solver


def deal_numbers(count: int, seed: int) -> list[int]:
    """Return the benchmark's fixed list of deal numbers."""
    rng = random.Random(seed)
    return [rng.randrange(COMPETITIVE_MIN, MAX_NUMBER + 1) for _ in range(count)]


def bench(variant: str, rule: str, numbers: list[int], seconds: float, cpu_clock: bool = False) -> str:
    """Solve every deal of ``numbers`` and return one line of figures."""
    load_before = os.getloadavg()[0]
    times: list[float] = []
    nodes = 0
    tally = dict.fromkeys((verdict.value for verdict in Verdict), 0)
    clock = time.process_time if cpu_clock else time.perf_counter
    for number in numbers:
        budget = Budget(nodes=10**9, seconds=seconds, clock=clock)
        solution = solve_deal(variant, number, rule, budget)
        times.append(solution.seconds or 0.0)
        nodes += solution.nodes
        tally[solution.verdict.value] += 1
    total = sum(times)
    rate = nodes / total if total else 0.0
    load_after = os.getloadavg()[0]
    return (
        f"{variant:<17} {rule:<10} {len(numbers):>5} deals  {rate:>9,.0f} nodes/s  "
        f"median {1000 * percentile(times, 0.5):8.2f} ms  p90 {1000 * percentile(times, 0.9):8.2f} ms  "
        f"p99 {percentile(times, 0.99):7.3f} s  max {max(times):7.3f} s  "
        f"won {tally['winnable']} lost {tally['unwinnable']} unknown {tally['unknown']}  "
        f"load {load_before:.2f}->{load_after:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--budget-seconds", type=float, default=10.0)
    parser.add_argument("--variants", nargs="*", default=sorted(VARIANTS), choices=sorted(VARIANTS))
    parser.add_argument("--rules", nargs="*", default=[rule.value for rule in ReserveRule])
    parser.add_argument(
        "--cpu-clock",
        action="store_true",
        help="budget and times in this process's CPU seconds (one core's work, whatever else runs)",
    )
    args = parser.parse_args()
    numbers = deal_numbers(args.deals, args.seed)
    clock = "CPU" if args.cpu_clock else "wall"
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()}, seed {args.seed}, "
        f"{args.deals} deals, budget {args.budget_seconds} s ({clock} clock)"
    )
    fast = vars(solver)["_fastsearch"]
    if fast is not None:
        print(f"search: C ({fast.__file__})")
    else:
        compiled = not (search.__file__ or "").endswith(".py")
        print(f"search: {'compiled (mypyc)' if compiled else 'plain Python'} ({search.__file__})")
    for variant in args.variants:
        for rule in args.rules:
            if rule == ReserveRule.WHEN_STUCK.value and not VARIANTS[variant].stock:
                continue  # Three Blind Mice has no reserve stock: the rule changes nothing
            print(bench(variant, rule, numbers, args.budget_seconds, args.cpu_clock), flush=True)


if __name__ == "__main__":
    main()
