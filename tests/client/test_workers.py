"""Work spread over worker processes (``client/commands/support/workers.py``), on real processes."""

from __future__ import annotations

import os
import signal
import time

import pytest

from client.commands.support.workers import Stopped, StopSignals, WorkerLost, run_in_workers


def _square_or_fail(task: tuple[int, float]) -> int:
    value, pause = task
    time.sleep(pause)
    if value < 0:
        raise ValueError(f"no square for {value}")
    return value * value


def _own_pid(task: int) -> int:
    return os.getpid()


def test_every_task_is_done_once_and_slow_ones_give_ticks_meanwhile() -> None:
    tasks = [(3, 0.0), (4, 0.4), (5, 0.0), (6, 0.0)]
    seen: dict[int, int] = {}
    ticks = 0
    for done in run_in_workers(_square_or_fail, tasks, 2, tick=0.05):
        if done is None:
            ticks += 1
            continue
        index, value = done
        assert index not in seen
        seen[index] = value
    assert seen == {0: 9, 1: 16, 2: 25, 3: 36}
    assert ticks >= 2  # while the slow task ran alone


def test_the_work_runs_in_other_processes() -> None:
    results = [done for done in run_in_workers(_own_pid, [0, 1, 2], 2, tick=1.0) if done is not None]
    pids = {pid for _, pid in results}
    assert sorted(index for index, _ in results) == [0, 1, 2]
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids


def test_a_task_that_raises_names_its_index_and_error() -> None:
    with pytest.raises(WorkerLost) as lost:
        list(run_in_workers(_square_or_fail, [(2, 0.0), (-7, 0.0)], 1, tick=1.0))
    assert lost.value.index == 1
    assert lost.value.error == "ValueError: no square for -7"
    assert lost.value.exit_code is None


def test_stop_signals_raise_while_working_and_are_only_noted_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals() as signals:
        with pytest.raises(Stopped):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        assert signals.received == signal.SIGTERM
        signals.raising = False
        os.kill(os.getpid(), signal.SIGINT)  # noted, not raised; the first one still counts
        time.sleep(0.01)
        assert signals.received == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
