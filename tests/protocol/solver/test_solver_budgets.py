"""The solver's budgets: nodes, seconds and memory, and the commands' refusal of budgets and
counts that mean nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.cli import main
from client.commands.support.arguments import half_the_memory, memory_size, memory_text
from protocol.game import Board
from protocol.solver import Budget, Verdict, solve, solve_deal


def test_a_tiny_node_budget_gives_unknown() -> None:
    solution = solve_deal("scorpion", 8, "any-time", Budget(nodes=5))
    assert solution.verdict is Verdict.UNKNOWN
    assert solution.moves == ()
    assert solution.nodes <= 6
    assert solution.seconds is None


def test_a_spent_time_budget_gives_unknown_and_reads_only_the_given_clock() -> None:
    ticks: Iterator[float] = iter(float(second) for second in range(10**6))
    calls = []

    def clock() -> float:
        calls.append(1)
        return next(ticks)

    solution = solve_deal("scorpion", 8, "any-time", Budget(nodes=10**9, seconds=1.5, clock=clock))
    assert solution.verdict is Verdict.UNKNOWN
    assert calls
    assert solution.seconds is not None and solution.seconds >= 1.5


SECONDS_REFUSED = "--budget-seconds: must be a number of seconds above 0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "--number", "5", "--budget-nodes", "0"], "--budget-nodes: must be at least 1, not 0"),
        (["solve", "--number", "5", "--budget-nodes", "-5"], "--budget-nodes: must be at least 1, not -5"),
        (["solve", "--number", "5", "--budget-nodes", "lots"], "--budget-nodes: not a whole number: 'lots'"),
        (["solve", "--number", "5", "--budget-seconds", "0"], SECONDS_REFUSED),
        (["solve", "--number", "5", "--budget-seconds", "-1"], SECONDS_REFUSED),
        (["solve", "--number", "5", "--budget-seconds", "nan"], SECONDS_REFUSED),
        (["solve", "--number", "5", "--budget-seconds", "inf"], SECONDS_REFUSED),
        (["study", "--deals", "0"], "--deals: must be at least 1, not 0"),
        (["study", "--deals", "-3"], "--deals: must be at least 1, not -3"),
        (["study", "--workers", "0"], "--workers: must be at least 1, not 0"),
        (["study", "--budget-seconds", "soon"], "--budget-seconds: not a number of seconds: 'soon'"),
        (["study", "--budget-nodes", "-1"], "--budget-nodes: must be at least 1, not -1"),
        (["solve", "--number", "5", "--budget-memory", "0"], "--budget-memory: must be at least 1M, not '0'"),
        (["solve", "--number", "5", "--budget-memory", "512K"], "--budget-memory: must be at least 1M"),
        (["study", "--budget-memory", "12Q"], "--budget-memory: not an amount of memory (like 800M or 4G)"),
        (["study", "--budget-memory=-4G"], "--budget-memory: not an amount of memory"),
    ],
)
def test_solve_and_study_refuse_budgets_and_counts_that_mean_nothing(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1M", 1 << 20),
        ("800M", 800 << 20),
        ("4G", 4 << 30),
        ("1.5g", 3 << 29),
        ("800MiB", 800 << 20),
        ("4GB", 4 << 30),
        ("65536K", 64 << 20),
        ("2097152", 2 << 20),
        (" 2 G ", 2 << 30),
    ],
)
def test_memory_sizes_read_in_powers_of_1024(text: str, size: int) -> None:
    assert memory_size(text) == size
    assert memory_size(memory_text(size)) == size


# A lost Wasp deal whose search keeps millions of positions (lost after 144 million nodes).
HARD_WASP = 15925648616820334506


def test_a_memory_budget_stops_a_search_with_unknown_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = Board.new("wasp", HARD_WASP, "any-time")
    small = solve(board, Budget(nodes=10**8, memory=4 << 20))
    assert small.verdict is Verdict.UNKNOWN and small.memory_full
    larger = solve(board, Budget(nodes=10**8, memory=16 << 20))
    assert larger.memory_full and small.nodes < larger.nodes < 10**8
    # A bound beyond any machine's memory is no bound (not an overflow).
    assert not solve(board, Budget(nodes=small.nodes, memory=10**30)).memory_full
    bounded_by_nodes = solve(board, Budget(nodes=small.nodes))
    assert bounded_by_nodes.verdict is Verdict.UNKNOWN and not bounded_by_nodes.memory_full
    # Wasp under when-stuck runs its looks for a win first, each with its own table.
    stuck = solve(Board.new("wasp", HARD_WASP, "when-stuck"), Budget(nodes=10**8, memory=4 << 20))
    assert stuck.verdict is Verdict.UNKNOWN and stuck.memory_full
    # The commands say why the verdict is unknown; the JSON keeps its contract.
    solve_args = ["solve", "--variant", "wasp", "--number", str(HARD_WASP), "--budget-memory", "4M"]
    assert main(solve_args) == 0
    out = capsys.readouterr().out
    assert out.startswith("unknown (") and "the search's table reached the memory budget of 4.0M" in out
    assert main([*solve_args, "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"verdict", "moves", "nodes", "seconds"}
    listed = tmp_path / "numbers.txt"
    listed.write_text(f"{HARD_WASP}\n5\n")
    study = ["study", "--variant", "wasp", "--numbers-file", str(listed), "--budget-memory", "4M"]
    assert main([*study, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["budget_memory"] == 4 << 20 and summary["memory_full"] == 1
    assert summary["unknown"]["count"] == 1 and summary["winnable"]["count"] == 1
    assert main(study) == 0
    assert "1 of the unknown stopped at the memory budget of 4.0M a worker" in capsys.readouterr().out
    # Without --budget-memory a worker gets half the machine's memory, shared by the workers.
    assert main(["study", "--deals", "1", "--seed", "1", "--workers", "2", "--json"]) == 0
    half = half_the_memory()
    assert half is not None and json.loads(capsys.readouterr().out)["budget_memory"] == half // 2
