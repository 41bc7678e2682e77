"""How a node tells Redis is gone and back, and what the move path's connection says of the
calls it could not complete: against a real Redis that the test stops or pauses."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from server.runtime.tasks import Tasks
from server.store import NotSent, StoreHealth
from server.store import health as health_module
from server.store.connection import _Pipeline
from tests.conftest import RedisServer

pytestmark = pytest.mark.asyncio


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


class Probe:
    """A probe that fails while ``down`` and records when it was called."""

    def __init__(self) -> None:
        self.down = False
        self.calls: list[float] = []

    async def __call__(self) -> bool:
        self.calls.append(time.monotonic())
        if self.down:
            raise ConnectionError("Redis is gone")
        return True


async def wait_until(condition: object, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the condition did not come true in time"
        await asyncio.sleep(0.01)


async def test_a_failed_request_marks_redis_down_from_its_last_answer_until_a_probe_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(health_module, "PROBE_EVERY", 0.05)
    clock, probe = Clock(), Probe()
    health = StoreHealth(probe, clock)
    changes: list[bool] = []
    health.on_change.append(changes.append)
    runner = asyncio.create_task(health.run())
    try:
        await wait_until(lambda: len(probe.calls) >= 2)
        answered = clock.now
        probe.down = True
        clock.now += 700
        health.failed()
        assert not health.up and health.down_since == answered
        assert 100 <= health.retry_after_ms() <= 1000
        assert health.outages_between(answered - 10, clock.now) == [(answered, clock.now)]
        clock.now += 2_000
        probe.down = False
        await wait_until(lambda: health.up)
        assert health.outages == [(answered, clock.now)]
        assert health.generation == 1 and changes == [False, True]
        assert health.outages_between(answered + 500, answered + 900) == [(answered + 500, answered + 900)]
        assert health.outages_between(clock.now + 1, clock.now + 5) == []
    finally:
        runner.cancel()


async def test_the_probe_stops_when_cancelled_as_a_failure_wakes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """At shutdown a request may fail (and wake the probe) in the same turn as the probe is
    cancelled: the cancellation still ends it."""
    monkeypatch.setattr(health_module, "PROBE_EVERY", 30.0)
    probe = Probe()
    health = StoreHealth(probe)
    runner = asyncio.create_task(health.run())
    await asyncio.sleep(0.05)  # asleep until the next probe, or until woken
    health.woken.set()
    runner.cancel()  # once, in the same turn
    await asyncio.wait([runner], timeout=1.0)
    try:
        assert runner.cancelled(), "the probe ran on after it was cancelled"
    finally:
        runner.cancel()


async def test_stopping_the_tasks_cancels_again_one_that_let_a_cancellation_go_by() -> None:
    tasks = Tasks()
    cancelled = 0

    async def stubborn() -> None:
        nonlocal cancelled
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled += 1
                if cancelled > 1:
                    raise

    runner = tasks.spawn(stubborn())
    await asyncio.sleep(0)
    await tasks.stop_all(timeout=1.0)
    assert runner.cancelled() and cancelled == 2 and not tasks.running


async def test_the_probe_backs_off_while_redis_stays_down_but_never_longer_than_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(health_module, "BACKOFF", (0.02, 0.08))
    monkeypatch.setattr(health_module, "PROBE_EVERY", 0.02)
    probe = Probe()
    health = StoreHealth(probe)
    runner = asyncio.create_task(health.run())
    try:
        probe.down = True
        await wait_until(lambda: not health.up)
        probe.calls.clear()
        await wait_until(lambda: len(probe.calls) >= 8)
        gaps = [b - a for a, b in zip(probe.calls, probe.calls[1:], strict=False)]
        assert gaps[-1] > gaps[0] * 1.5, gaps  # it backed off
        assert max(gaps) < 0.08 * 1.2 + 0.05, gaps  # up to the cap (jittered), no further
        assert not health.up and health.generation == 0
    finally:
        runner.cancel()


async def test_a_call_to_a_paused_redis_fails_after_the_timeout_as_unknown_not_as_not_sent(
    own_redis: RedisServer,
) -> None:
    pipeline = _Pipeline(own_redis.url, timeout=0.4)
    try:
        assert await pipeline.call("SET", "k", "1") == "OK"
        assert own_redis.process is not None
        own_redis.process.send_signal(signal.SIGSTOP)
        began = time.monotonic()
        with pytest.raises(ConnectionError) as caught:
            await pipeline.call("INCR", "k")
        took = time.monotonic() - began
        assert not isinstance(caught.value, NotSent)  # it was written: Redis may still run it
        assert 0.4 <= took < 1.5, took
        own_redis.process.send_signal(signal.SIGCONT)
        # Redis ran the INCR once it woke: that is why its outcome was "unknown".
        await wait_until(lambda: own_redis._ping())
        assert await pipeline.call("GET", "k") == "2"
    finally:
        await pipeline.close()


async def test_calls_that_never_left_the_node_fail_as_not_sent(own_redis: RedisServer) -> None:
    pipeline = _Pipeline(own_redis.url, timeout=0.4)
    try:
        assert await pipeline.call("PING") == "PONG"
        # Queued in one turn of the loop and the connection dropped before the write.
        queued = [asyncio.ensure_future(pipeline.call("INCR", "n")) for _ in range(3)]
        await asyncio.sleep(0)
        pipeline._drop(ConnectionError("lost"))
        for call in queued:
            with pytest.raises(NotSent):
                await call
        assert await pipeline.call("GET", "n") is None  # none of them ran
        own_redis.stop()
        await wait_until(lambda: pipeline.writer is None)  # it saw the connection close
        with pytest.raises(NotSent):
            await pipeline.call("INCR", "n")
    finally:
        await pipeline.close()
