"""``scorpion study``: solve many random deals and report how many can be won.

Deal numbers are drawn from PySolFC's large range (32001 to 10**20 - 1) with ``--seed``
for a reproducible list, else with :mod:`secrets`; the numbers are always listed (in the
output, or in the ``--out`` file) so anyone can re-run exactly the same deals.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, VARIANTS, DealError, ReserveRule, check_number
from protocol.solver import Budget, Verdict, percentile, solve_deal, wilson_interval

from .options import half_the_memory, memory_size, memory_text, positive_int, positive_seconds

__all__ = ["draw_numbers", "read_numbers", "register", "run", "summarize"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``study`` subcommand."""
    parser = subparsers.add_parser("study", help="solve random deals and report the share that can be won")
    parser.add_argument("--variant", default="scorpion", choices=sorted(VARIANTS))
    parser.add_argument("--deals", type=positive_int, default=100, help="how many deals (default 100)")
    parser.add_argument("--budget-seconds", type=positive_seconds, default=10.0, help="time budget per deal")
    parser.add_argument("--budget-nodes", type=positive_int, default=50_000_000, help="node budget per deal")
    parser.add_argument(
        "--reserve", default=ReserveRule.ANY_TIME.value, choices=[rule.value for rule in ReserveRule]
    )
    parser.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--budget-memory",
        type=memory_size,
        metavar="SIZE",
        help="memory each worker's search table may take, like 800M or 4G; a deal's verdict is "
        "unknown once it would take more (default: half this machine's memory, shared by the workers)",
    )
    parser.add_argument("--seed", type=int, help="seed for a reproducible list of deal numbers")
    parser.add_argument("--numbers-file", type=Path, help="solve the deal numbers listed in this file")
    parser.add_argument("--out", type=Path, help="write every deal's number and result to this JSON file")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--cpu-clock",
        action="store_true",
        help="measure the time budget and solve times in the worker's CPU seconds rather than wall "
        "seconds, so that a study on a busy machine decides the same deals as on a quiet one",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="solve nothing: summarize the deals of earlier --out files together (a deal counts "
        "once; a verdict proved in any file beats unknown, and two proofs that differ are an error)",
    )
    parser.set_defaults(handler=run)


def draw_numbers(count: int, seed: int | None) -> list[int]:
    """Return ``count`` deal numbers from the large range, reproducibly when ``seed`` is given."""
    span = MAX_NUMBER - COMPETITIVE_MIN + 1
    if seed is not None:
        rng = random.Random(seed)
        return [COMPETITIVE_MIN + rng.randrange(span) for _ in range(count)]
    return [COMPETITIVE_MIN + secrets.randbelow(span) for _ in range(count)]


def read_numbers(path: Path) -> list[int]:
    """Return the deal numbers listed in ``path`` (whitespace between them, lines may be blank).

    Raises ``OSError`` if the file cannot be read and ``ValueError``, naming the line, for
    anything that is not a game number, or for a file that lists none.
    """
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file of deal numbers") from None
    except OSError as exc:
        raise OSError(f"cannot read {path}: {exc.strerror or exc}") from None
    numbers: list[int] = []
    for line_number, line in enumerate(text.splitlines(), 1):
        for word in line.split():
            try:
                numbers.append(check_number(int(word)))
            except ValueError as exc:
                reason = str(exc) if isinstance(exc, DealError) else f"not a deal number: {word!r}"
                raise ValueError(f"{path} line {line_number}: {reason}") from None
    if not numbers:
        raise ValueError(f"{path} lists no deal numbers")
    return numbers


Task = tuple[str, int, str, float, int, bool, int | None]


def _solve_one(task: Task) -> dict[str, object]:
    variant, number, rule, seconds, nodes, cpu_clock, memory = task
    clock = time.process_time if cpu_clock else time.perf_counter
    solution = solve_deal(
        variant, number, rule, Budget(nodes=nodes, seconds=seconds, clock=clock, memory=memory)
    )
    result: dict[str, object] = {
        "number": number,
        "verdict": solution.verdict.value,
        "nodes": solution.nodes,
        "seconds": round(solution.seconds or 0.0, 6),
        "moves": len(solution.moves),
    }
    if solution.memory_full:
        result["memory_full"] = True
    return result


def _results(tasks: list[Task], workers: int) -> Iterator[dict[str, object]]:
    if workers <= 1:
        for task in tasks:
            yield _solve_one(task)
        return
    with multiprocessing.Pool(workers) as pool:
        yield from pool.imap(_solve_one, tasks, chunksize=1)


def summarize(results: list[dict[str, object]]) -> dict[str, object]:
    """Return counts with 95% Wilson intervals and solve-time percentiles."""
    total = len(results)
    summary: dict[str, object] = {"deals": total}
    for verdict in Verdict:
        count = sum(1 for item in results if item["verdict"] == verdict.value)
        low, high = wilson_interval(count, total)
        share = count / total if total else 0.0
        summary[verdict.value] = {"count": count, "share": share, "ci95": [low, high]}
    times = [float(str(item["seconds"])) for item in results]
    summary["seconds"] = {
        "median": percentile(times, 0.5),
        "p90": percentile(times, 0.9),
        "p99": percentile(times, 0.99),
        "max": max(times) if times else 0.0,
        "total": sum(times),
    }
    return summary


_VERDICTS = frozenset(verdict.value for verdict in Verdict)


def _merge(files: list[Path], as_json: bool) -> int:
    # A deal met in several files counts once: a proof (winnable or unwinnable) stands
    # whatever the budget or machine, so it beats "unknown"; two proofs must agree.
    by_number: dict[object, dict[str, object]] = {}
    described: set[tuple[object, object, object]] = set()
    for path in files:
        try:
            data = json.loads(path.read_text())
            head = data["summary"]
            described.add((head["variant"], head["reserve"], head["budget_seconds"]))
            items = [item for item in data["deals"] if item["verdict"] in _VERDICTS and "number" in item]
            if len(items) != len(data["deals"]):
                raise ValueError("a deal without a number or a verdict")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a study file written by --out ({exc})", file=sys.stderr)
            return 2
        for item in items:
            known = by_number.get(item["number"])
            if known is None or known["verdict"] == Verdict.UNKNOWN.value:
                by_number[item["number"]] = item
            elif item["verdict"] not in (Verdict.UNKNOWN.value, known["verdict"]):
                print(
                    f"error: deal {item['number']} is {known['verdict']} in one file and "
                    f"{item['verdict']} in {path}",
                    file=sys.stderr,
                )
                return 2
    if len(described) != 1:
        print(f"error: the files describe different studies: {sorted(map(str, described))}", file=sys.stderr)
        return 2
    if not by_number:
        print("error: the files list no deals", file=sys.stderr)
        return 2
    variant, reserve, budget = described.pop()
    summary = summarize(list(by_number.values()))
    summary.update(
        {
            "variant": variant,
            "reserve": reserve,
            "budget_seconds": budget,
            "files": [str(path) for path in files],
        }
    )
    if as_json:
        print(json.dumps(summary))
    else:
        _print_summary(summary, str(variant), str(reserve), budget)
    return 0


def _print_summary(summary: dict[str, object], variant: str, reserve: str, budget: object) -> None:
    print(f"{variant} {reserve}: {summary['deals']} deals, budget {budget} s per deal")
    for verdict in Verdict:
        entry = summary[verdict.value]
        assert isinstance(entry, dict)
        low, high = entry["ci95"]
        print(
            f"  {verdict.value:<10} {entry['count']:>6}  {100 * entry['share']:6.2f}%  "
            f"95% CI {100 * low:.2f}-{100 * high:.2f}%"
        )
    timing = summary["seconds"]
    assert isinstance(timing, dict)
    template = "  solve time: median {median:.4f} s, p90 {p90:.4f} s, p99 {p99:.3f} s, max {max:.3f} s"
    print(template.format(**timing))


def run(args: argparse.Namespace) -> int:
    """Run the study and print its summary."""
    if args.merge:
        return _merge(args.merge, args.json)
    if args.numbers_file is not None:
        try:
            numbers = read_numbers(args.numbers_file)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        numbers = draw_numbers(args.deals, args.seed)
    if args.out is not None:
        # Found unwritable now, not after the whole study has run.
        try:
            with args.out.open("a"):
                pass
        except OSError as exc:
            print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    memory = args.budget_memory
    if memory is None:
        half = half_the_memory()
        memory = half // args.workers if half is not None else None
    tasks = [
        (args.variant, number, args.reserve, args.budget_seconds, args.budget_nodes, args.cpu_clock, memory)
        for number in numbers
    ]
    results: list[dict[str, object]] = []
    tally = dict.fromkeys((verdict.value for verdict in Verdict), 0)
    started = time.perf_counter()
    for result in _results(tasks, args.workers):
        results.append(result)
        tally[str(result["verdict"])] += 1
        print(
            f"\r{len(results)}/{len(tasks)} won {tally['winnable']} lost {tally['unwinnable']} "
            f"unknown {tally['unknown']} ({time.perf_counter() - started:.0f} s)",
            end="",
            file=sys.stderr,
            flush=True,
        )
    print(file=sys.stderr)
    summary = summarize(results)
    summary.update(
        {
            "variant": args.variant,
            "reserve": args.reserve,
            "budget_seconds": args.budget_seconds,
            "budget_nodes": args.budget_nodes,
            "budget_memory": memory,
            "memory_full": sum(1 for item in results if item.get("memory_full")),
            "seed": args.seed,
            "workers": args.workers,
            "clock": "cpu" if args.cpu_clock else "wall",
            "wall_seconds": round(time.perf_counter() - started, 3),
            "loadavg": list(os.getloadavg()),
        }
    )
    written = False
    if args.out is not None:
        try:
            args.out.write_text(json.dumps({"summary": summary, "deals": results}, indent=1) + "\n")
            written = True
        except OSError as exc:
            # The study is not lost: its summary and numbers are printed instead.
            print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
    if not written:
        summary["numbers"] = numbers
    status = 2 if args.out is not None and not written else 0
    if args.json:
        print(json.dumps(summary))
        return status
    _print_summary(summary, args.variant, args.reserve, args.budget_seconds)
    if summary["memory_full"] and memory is not None:
        print(
            f"  {summary['memory_full']} of the unknown stopped at the memory budget of "
            f"{memory_text(memory)} a worker (--budget-memory)"
        )
    if written:
        print(f"  deals and results: {args.out}")
    else:
        print("  numbers: " + " ".join(str(number) for number in numbers))
    return status
