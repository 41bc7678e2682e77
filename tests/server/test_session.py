"""One connection's queue, alone: events in version order, a gap filled from the log before
going on, and a slow reader's backlog turned into a resync, with a small fake event source
and a fake socket in place of the node and the network."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from protocol.wire.codec import JSON, Format
from protocol.wire.message import Message, Options, Progress, Racer, RacerProgress, Snapshot
from server.session import Session, SessionLimits

pytestmark = pytest.mark.asyncio

GAME = "G1"


class FakeSocket:
    """A socket that is never writable at once, so everything goes through the queue."""

    transport = None

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    async def send(self, frame: bytes | str) -> None:
        self.sent.append(json.loads(frame))

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


def progress(version: int) -> Progress:
    return Progress(game=GAME, v=version, player="bob", summary={"moves": version}, status="playing")


class FakeSource:
    """The node's game feed, reduced to what a session asks of it, counting the questions."""

    def __init__(self, snapshot_version: int = 50) -> None:
        self.missed_asked: list[tuple[int, int]] = []
        self.resyncs: list[tuple[str, str | None]] = []
        self.snapshot_version = snapshot_version

    def frames(
        self, game_id: str, version: int, event: dict[str, Any], viewer: str | None, fmt: Format
    ) -> list[Message | bytes | str]:
        return [progress(version)]

    async def missed(self, game_id: str, after: int, upto: int, viewer: str | None) -> list[Message]:
        self.missed_asked.append((after, upto))
        return [progress(v) for v in range(after + 1, upto + 1)]

    async def resync(self, game_id: str, viewer: str | None) -> Message | None:
        self.resyncs.append((game_id, viewer))
        return Snapshot(
            game=game_id,
            v=self.snapshot_version,
            variant="scorpion",
            options=Options(),
            start=1,
            now=2,
            commitment="0" * 64,
            roster=(Racer(player="ann", name="Ann"), Racer(player="bob", name="Bob")),
            view={},
            summary={},
            status="playing",
            racers=(RacerProgress(player="bob", summary={}, status="playing"),),
        )


def racer_session(source: FakeSource, send_queue: int = 64) -> tuple[Session, FakeSocket, list[int]]:
    socket = FakeSocket()
    resyncs: list[int] = []
    limits = SessionLimits(
        message_credits=100,
        spectator_credits=100,
        credit_window=1.0,
        rate_limit_strikes=3,
        send_queue=send_queue,
    )
    session = Session(socket, JSON, "n1", limits, source, on_resync=lambda: resyncs.append(1))  # type: ignore[arg-type]
    session.player = "ann"
    session.games[GAME] = 1
    return session, socket, resyncs


async def drain(session: Session) -> None:
    session.writer = asyncio.create_task(session.run_writer())
    await session.close_after_flush(1000, "done", timeout=5)
    assert session.writer.done()


def event(version: int, origin: str = "n2/") -> dict[str, Any]:
    return {"type": "move", "player": "bob", "origin": origin, "v": version}


async def test_events_go_out_in_version_order_and_old_ones_are_dropped() -> None:
    source = FakeSource()
    session, socket, _ = racer_session(source)
    for version in (2, 3, 3, 2, 4):
        session.deliver(GAME, version, event(version), spectator=False)
    await drain(session)
    assert [frame["v"] for frame in socket.sent] == [2, 3, 4]
    assert socket.closed == (1000, "done") and source.missed_asked == []


async def test_a_gap_is_filled_from_the_log_before_the_event_after_it() -> None:
    source = FakeSource()
    session, socket, _ = racer_session(source)
    session.deliver(GAME, 2, event(2), spectator=False)
    session.deliver(GAME, 6, event(6), spectator=False)  # 3, 4 and 5 never came by pub/sub
    session.deliver(GAME, 7, event(7), spectator=False)
    await drain(session)
    assert source.missed_asked == [(2, 5)]
    assert [frame["v"] for frame in socket.sent] == [2, 3, 4, 5, 6, 7]
    assert all(frame["type"] == "progress" for frame in socket.sent)


async def test_the_racer_s_own_event_advances_the_version_without_a_frame() -> None:
    source = FakeSource()
    session, socket, _ = racer_session(source)
    session.deliver(GAME, 2, event(2, origin=session.id), spectator=False)  # answered by `accepted`
    session.deliver(GAME, 3, event(3), spectator=False)
    await drain(session)
    assert [frame["v"] for frame in socket.sent] == [3]
    assert session.games[GAME] == 3


async def test_a_backlog_past_the_queue_s_bound_becomes_one_resync() -> None:
    source = FakeSource(snapshot_version=40)
    session, socket, resyncs = racer_session(source, send_queue=8)
    session.send(progress(1))  # an answer already queued: kept, before the resync
    for version in range(2, 40):
        session.deliver(GAME, version, event(version), spectator=False)
        assert len(session.out) <= 8 + 2, "the queue grew past its bound"
    await drain(session)
    assert resyncs, "the overflow was not reported"
    assert source.resyncs and source.resyncs[0] == (GAME, "ann")
    kinds = [frame["type"] for frame in socket.sent]
    assert kinds[0] == "progress" and socket.sent[0]["v"] == 1
    assert "snapshot" in kinds
    # after the snapshot, nothing older than it is sent, and the session follows from it
    after = socket.sent[kinds.index("snapshot") + 1 :]
    assert all(frame["v"] > 40 for frame in after)
    assert session.games[GAME] >= 40


async def test_a_spectator_s_events_and_a_racer_s_are_kept_apart() -> None:
    source = FakeSource()
    session, socket, _ = racer_session(source)
    session.watching["G2"] = 5
    session.deliver("G2", 6, event(6), spectator=True)
    session.deliver("G2", 6, event(6), spectator=False)  # not raced by this connection: dropped
    await drain(session)
    assert len(socket.sent) == 1 and session.watching["G2"] == 6 and session.games[GAME] == 1
