"""``scorpion study``: solve many random deals and report how many can be won.

Deal numbers are drawn from PySolFC's large range (32001 to 10**20 - 1) with ``--seed``
for a reproducible list, else with :mod:`secrets`; the numbers are always listed (in the
output, or in the ``--out`` file) so anyone can re-run exactly the same deals.

A long study keeps its work: the ``--out`` file is rewritten as the study goes
(``--checkpoint``), and a study stopped by Ctrl-C or a kill writes what it has done with
the deals still to solve, which ``--resume FILE`` then finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, VARIANTS, DealError, ReserveRule, check_number
from protocol.solver import Budget, Verdict, percentile, solve_deal, wilson_interval

from .support.arguments import half_the_memory, memory_size, memory_text, positive_int, positive_seconds
from .support.workers import Stopped, StopSignals, WorkerLost, run_in_workers

__all__ = ["draw_numbers", "read_numbers", "register", "run", "summarize"]


# The settings' defaults (run() applies them: the parser leaves unset options None so that
# --resume can tell which were given).
_VARIANT = "scorpion"
_DEALS = 100
_SECONDS = 10.0
_NODES = 50_000_000
_RESERVE = ReserveRule.ANY_TIME.value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``study`` subcommand."""
    parser = subparsers.add_parser("study", help="solve random deals and report the share that can be won")
    parser.add_argument("--variant", choices=sorted(VARIANTS), help=f"the game (default {_VARIANT})")
    parser.add_argument("--deals", type=positive_int, help=f"how many deals (default {_DEALS})")
    parser.add_argument(
        "--budget-seconds",
        type=positive_seconds,
        help=f"time budget per deal (default {_SECONDS:g})",
    )
    parser.add_argument(
        "--budget-nodes", type=positive_int, help=f"node budget per deal (default {_NODES:,})"
    )
    parser.add_argument(
        "--reserve",
        choices=[rule.value for rule in ReserveRule],
        help=f"when the reserve may be dealt (default {_RESERVE})",
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
        default=None,
        help="measure the time budget and solve times in the worker's CPU seconds rather than wall "
        "seconds, so that a study on a busy machine decides the same deals as on a quiet one",
    )
    parser.add_argument(
        "--checkpoint",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="with --out, rewrite the file this often while the study runs, so that a study "
        "killed outright (kill -9, a crash) loses at most the deals done in the last SECONDS "
        "(default 30)",
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="finish a study that was stopped: solve the deals its --out FILE lists as remaining, "
        "with the settings recorded there, and write the whole study back to FILE",
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


@dataclass
class _Study:
    """What a study solves and how: a new one from the command line, or one resumed."""

    variant: str
    reserve: str
    seconds: float
    nodes: int
    memory: int | None
    cpu_clock: bool
    seed: int | None
    numbers: list[int]
    out: Path | None
    results: list[dict[str, object]] = field(default_factory=list)
    """The deals solved already (a resumed study's), in the order of ``numbers``."""
    wall_seconds: float = 0.0
    """Wall time the runs before this one took (a resumed study's)."""


def summarize(results: list[dict[str, object]]) -> dict[str, object]:
    """Return counts with 95% Wilson intervals and solve-time percentiles (``None`` for a
    study that solved no deal, whose times are not numbers)."""
    total = len(results)
    summary: dict[str, object] = {"deals": total}
    for verdict in Verdict:
        count = sum(1 for item in results if item["verdict"] == verdict.value)
        low, high = wilson_interval(count, total)
        share = count / total if total else 0.0
        summary[verdict.value] = {"count": count, "share": share, "ci95": [low, high]}
    times = [float(str(item["seconds"])) for item in results]
    summary["seconds"] = {
        "median": percentile(times, 0.5) if times else None,
        "p90": percentile(times, 0.9) if times else None,
        "p99": percentile(times, 0.99) if times else None,
        "max": max(times) if times else None,
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
            left = data.get("remaining") or []
            if not isinstance(left, list):
                raise TypeError("its remaining deals are not a list")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a study file written by --out ({exc})", file=sys.stderr)
            return 2
        if left:
            print(
                f"note: {path} is a study stopped before its end: {len(left)} of its deals are "
                f"not solved (scorpion study --resume {path})",
                file=sys.stderr,
            )
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
    if not summary["deals"]:
        return
    template = "  solve time: median {median:.4f} s, p90 {p90:.4f} s, p99 {p99:.3f} s, max {max:.3f} s"
    print(template.format(**timing))


def _write(path: Path, data: dict[str, object]) -> None:
    """Write a study file whole: a new file takes the old one's place only once written,
    so a study stopped (or a disk filled) mid-write keeps its last checkpoint."""
    text = json.dumps(data, indent=1) + "\n"
    if path.exists() and not path.is_file():  # a device or a pipe: written as it is
        path.write_text(text)
        return
    path = path.resolve()  # a link stays a link: the file it names is the one replaced
    part = path.with_name(path.name + ".part")
    try:
        part.write_text(text)
        os.replace(part, path)
    except OSError:
        part.unlink(missing_ok=True)
        raise


def _fresh(args: argparse.Namespace) -> _Study | int:
    """The study the command line asks for, or an exit status after an error."""
    if args.numbers_file is not None:
        try:
            numbers = read_numbers(args.numbers_file)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        numbers = draw_numbers(args.deals or _DEALS, args.seed)
    memory = args.budget_memory
    if memory is None:
        half = half_the_memory()
        memory = half // args.workers if half is not None else None
    return _Study(
        variant=args.variant or _VARIANT,
        reserve=args.reserve or _RESERVE,
        seconds=args.budget_seconds or _SECONDS,
        nodes=args.budget_nodes or _NODES,
        memory=memory,
        cpu_clock=bool(args.cpu_clock),
        seed=args.seed,
        numbers=numbers,
        out=args.out,
    )


_RESUME_FIXED = (
    ("variant", "--variant"),
    ("reserve", "--reserve"),
    ("deals", "--deals"),
    ("budget_seconds", "--budget-seconds"),
    ("budget_nodes", "--budget-nodes"),
    ("budget_memory", "--budget-memory"),
    ("cpu_clock", "--cpu-clock"),
    ("seed", "--seed"),
    ("numbers_file", "--numbers-file"),
    ("out", "--out"),
)


def _resumed(args: argparse.Namespace) -> _Study | int:
    """The stopped study in ``args.resume``'s file, or an exit status after an error."""
    path: Path = args.resume
    given = [flag for name, flag in _RESUME_FIXED if getattr(args, name) is not None]
    if given:
        print(
            f"error: --resume finishes {path}'s study with the settings recorded there and writes "
            f"it back there; leave out {', '.join(given)}",
            file=sys.stderr,
        )
        return 2
    try:
        data = json.loads(path.read_text())
        head = data["summary"]
        done = data["deals"]
        left = data.get("remaining") or []
        if not isinstance(done, list) or not isinstance(left, list):
            raise TypeError("its deals are not lists")
        if any(not isinstance(item, dict) or item.get("verdict") not in _VERDICTS for item in done):
            raise ValueError("a deal without a verdict")
        numbers = [check_number(item["number"]) for item in done] + [check_number(number) for number in left]
        variant, reserve = str(head["variant"]), str(head["reserve"])
        if variant not in VARIANTS or reserve not in {rule.value for rule in ReserveRule}:
            raise ValueError(f"unknown variant or reserve rule {variant!r}, {reserve!r}")
        seconds, nodes = float(head["budget_seconds"]), int(head["budget_nodes"])
        memory = head.get("budget_memory")  # None: no bound (also files written before it existed)
        if not (seconds > 0 and nodes > 0 and (memory is None or (type(memory) is int and memory > 0))):
            raise ValueError("its budgets are not positive")
        if head["clock"] not in ("cpu", "wall"):
            raise ValueError(f"unknown clock {head['clock']!r}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {path} is not a study file written by --out ({exc})", file=sys.stderr)
        return 2
    if not left:
        print(f"{path}: the study is complete, no deal is left to solve", file=sys.stderr)
    return _Study(
        variant=variant,
        reserve=reserve,
        seconds=seconds,
        nodes=nodes,
        memory=memory,
        cpu_clock=head["clock"] == "cpu",
        seed=head.get("seed"),
        numbers=numbers,
        out=path,
        results=done,
        wall_seconds=float(head.get("wall_seconds") or 0.0),
    )


def run(args: argparse.Namespace) -> int:
    """Run the study (a new one, or the rest of a stopped one) and print its summary."""
    if args.merge:
        return _merge(args.merge, args.json)
    study = _resumed(args) if args.resume is not None else _fresh(args)
    if isinstance(study, int):
        return study
    if study.out is not None:
        # Found unwritable now, not after the whole study has run.
        try:
            with study.out.open("a"):
                pass
        except OSError as exc:
            print(f"error: cannot write {study.out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return _run(study, args.workers, args.checkpoint, args.json)


def _run(study: _Study, workers: int, checkpoint: float, as_json: bool) -> int:
    first = len(study.results)  # the deals solved before (a resumed study's) come first
    solved: dict[int, dict[str, object]] = dict(enumerate(study.results))
    tasks: list[Task] = [
        (study.variant, number, study.reserve, study.seconds, study.nodes, study.cpu_clock, study.memory)
        for number in study.numbers[first:]
    ]
    tally = dict.fromkeys((verdict.value for verdict in Verdict), 0)
    for item in study.results:
        tally[str(item["verdict"])] += 1
    started = time.perf_counter()

    def contents() -> dict[str, object]:
        # The deals in the order of the numbers, and those not solved yet (with several
        # workers, a slow deal may still run while later ones are done).
        results = [solved[place] for place in sorted(solved)]
        left = [number for place, number in enumerate(study.numbers) if place not in solved]
        summary = summarize(results)
        summary.update(
            {
                "variant": study.variant,
                "reserve": study.reserve,
                "budget_seconds": study.seconds,
                "budget_nodes": study.nodes,
                "budget_memory": study.memory,
                "memory_full": sum(1 for item in results if item.get("memory_full")),
                "seed": study.seed,
                "workers": workers,
                "clock": "cpu" if study.cpu_clock else "wall",
                "wall_seconds": round(study.wall_seconds + time.perf_counter() - started, 3),
                "loadavg": list(os.getloadavg()),
                "remaining": len(left),
            }
        )
        data: dict[str, object] = {"summary": summary, "deals": results}
        if left:
            data["remaining"] = left
        return data

    failure = ""
    saved = time.perf_counter()
    unsaved = warned = False

    def _checkpoint() -> None:
        nonlocal saved, unsaved, warned
        assert study.out is not None
        try:
            _write(study.out, contents())
            unsaved = False
        except OSError as exc:
            if not warned:  # the final write tries again, and says so if it fails
                print(f"\nwarning: cannot write {study.out} yet: {exc.strerror or exc}", file=sys.stderr)
                warned = True
        saved = time.perf_counter()

    with StopSignals() as signals:
        try:
            with closing(run_in_workers(_solve_one, tasks, workers, checkpoint)) as stream:
                for done in stream:  # None: a while without a result (a slow deal)
                    if done is not None:
                        index, result = done
                        solved[first + index] = result
                        unsaved = True
                        tally[str(result["verdict"])] += 1
                        print(
                            f"\r{len(solved)}/{len(study.numbers)} won {tally['winnable']} "
                            f"lost {tally['unwinnable']} unknown {tally['unknown']} "
                            f"({time.perf_counter() - started:.0f} s)",
                            end="",
                            file=sys.stderr,
                            flush=True,
                        )
                    if unsaved and study.out is not None and time.perf_counter() - saved >= checkpoint:
                        _checkpoint()
        except Stopped:
            pass
        except WorkerLost as exc:
            # A worker ended by SIGINT or SIGTERM was stopped with the study's process group
            # (whose own signal may come a moment later): a stop, not a failure.
            if exc.exit_code is not None and -exc.exit_code in StopSignals.WATCHED:
                signals.received = signals.received or -exc.exit_code
            else:
                deal = study.numbers[first + exc.index]
                if exc.error is not None:
                    failure = f"deal {deal} could not be solved: {exc.error}"
                else:
                    failure = f"a worker process ended while solving deal {deal} (exit code {exc.exit_code})"
        signals.raising = False
        return _report(study, contents(), len(solved), signals.received, failure, as_json)


def _report(
    study: _Study, data: dict[str, object], solved: int, stopped: int, failure: str, as_json: bool
) -> int:
    """Write the study's file and print its summary; return the exit status."""
    print(file=sys.stderr)
    summary = data["summary"]
    assert isinstance(summary, dict)
    written = False
    if study.out is not None:
        try:
            _write(study.out, data)
            written = True
        except OSError as exc:
            # The study is not lost: its summary and numbers are printed instead.
            print(f"error: cannot write {study.out}: {exc.strerror or exc}", file=sys.stderr)
    if not written:
        summary["numbers"] = study.numbers
    if stopped or failure:
        if failure:
            print(f"error: {failure}", file=sys.stderr)
        left = len(study.numbers) - solved
        print(f"stopped: {solved} of {len(study.numbers)} deals solved, {left} not", file=sys.stderr)
        if written:
            print(f"finish it with: scorpion study --resume {study.out}", file=sys.stderr)
        status = 128 + stopped if stopped else 1
    else:
        status = 2 if study.out is not None and not written else 0
    if as_json:
        print(json.dumps(summary))
        return status
    _print_summary(summary, study.variant, study.reserve, study.seconds)
    memory_full = summary["memory_full"]
    if memory_full and study.memory is not None:
        print(
            f"  {memory_full} of the unknown stopped at the memory budget of "
            f"{memory_text(study.memory)} a worker (--budget-memory)"
        )
    if written:
        print(f"  deals and results: {study.out}")
    else:
        print("  numbers: " + " ".join(str(number) for number in study.numbers))
    return status
