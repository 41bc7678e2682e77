"""``scorpion-server --workers N``: N nodes on one port under a supervising process.

Each test starts the real command. Which worker serves a connection is read from Linux's
/proc: the worker whose open sockets include the server side of that connection.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis

from protocol.game import Board, move_json
from server.config import Config, load_config
from server.runtime.workers import worker_environment
from tests.conftest import child_pids, is_running

from .conftest import Client, Node, spawn_node, start_race

__all__ = [
    "SupervisorNode",
    "one_client_per_worker",
    "serving_worker",
    "store_of",
    "wait_until",
    "workers_of",
]

DEAL = 271828182845


class SupervisorNode(Node):
    """A ``scorpion-server --workers 2`` process, and the file its log goes to."""

    def __init__(self, node: Node, log: Path) -> None:
        super().__init__(node.process, node.port)
        self.log = log

    def logged(self) -> str:
        """Return what it (and its workers) logged so far."""
        return self.log.read_text(errors="replace")


Supervised = Callable[..., SupervisorNode]


def workers_of(parent: Node) -> list[int]:
    """Return the running worker processes of a supervisor."""
    found = []
    for pid in child_pids(parent.process.pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"server.main" in cmdline and is_running(pid):
            found.append(pid)
    return sorted(found)


def store_of(parent: Node) -> int:
    """Return the pid of the supervisor's embedded store."""
    for pid in child_pids(parent.process.pid):
        if b"valkey-server" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError("the supervisor started no embedded store")


def _server_side_inodes(port: int, client_port: int) -> set[int]:
    """Return the inodes of the server's end of the loopback TCP connection from ``client_port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cells = row.split()
            local, remote, inode = cells[1], cells[2], int(cells[9])
            if int(local.rsplit(":", 1)[1], 16) == port and int(remote.rsplit(":", 1)[1], 16) == client_port:
                found.add(inode)
    return found


def serving_worker(node: Node, client: Client, workers: list[int]) -> int:
    """Return the worker (of ``workers``) that accepted ``client``'s connection."""
    inodes = _server_side_inodes(node.port, client.ws.local_address[1])
    assert inodes, "the connection is not in the kernel's table"
    for pid in workers:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:  # closed meanwhile
                continue
            if target.startswith("socket:[") and int(target[8:-1]) in inodes:
                return pid
    raise AssertionError(f"no worker of {workers} holds the connection")


async def one_client_per_worker(
    node: Node, open_client: Any, workers: list[int], names: tuple[str, ...] = ()
) -> dict[int, Client]:
    """Open connections until each worker serves one; return the first of each, by worker.

    The kernel picks a worker per connection from a hash of its addresses, so a few tries
    are needed (forty in a row on one of two workers would happen once in 2^39 runs).
    """
    found: dict[int, Client] = {}
    for attempt in range(40):
        name = names[len(found)] if len(found) < len(names) else f"Guest{attempt}"
        client: Client = await open_client(node, name)
        found.setdefault(serving_worker(node, client, workers), client)
        if len(found) == len(workers):
            return found
    raise AssertionError(f"forty connections were all served by {sorted(found)}")


def wait_until(check: Callable[[], bool], what: str, seconds: float = 15) -> None:
    """Wait until ``check()`` holds, or fail saying ``what`` did not happen."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.05)


@pytest.fixture
def supervised(tmp_path: Path) -> Iterator[Supervised]:
    """Start ``scorpion-server --workers 2`` processes; kill them and their workers and
    stores at the end, whatever the test did."""
    started: list[SupervisorNode] = []
    log = tmp_path / "supervisor.log"

    def start(*args: str, **settings: Any) -> SupervisorNode:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCORPION_")}
        env.update({"SCORPION_LOG_FORMAT": "text", "SCORPION_LOG_LEVEL": "info"})
        env.update({f"SCORPION_{k.upper()}": str(v) for k, v in settings.items()})
        node = SupervisorNode(spawn_node(env, log, "--workers", "2", *args), log)
        started.append(node)
        return node

    yield start
    for node in started:
        children = child_pids(node.process.pid)
        node.process.kill()
        node.process.wait()
        for pid in children:  # they die with it too; this is in case they have not yet
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)
    if log.exists():  # shown by pytest only when the test failed
        print(f"--- supervisor log ---\n{log.read_text(errors='replace')[-20000:]}")


def test_workers_take_auto_and_positive_counts_only() -> None:
    assert load_config(["--workers", "auto"], environ={}).workers == (os.cpu_count() or 1)
    assert load_config([], environ={"SCORPION_WORKERS": "3"}).workers == 3
    assert load_config([], environ={}).workers == 1
    for bad, message in (("0", "workers must be more than 0, not 0"), ("two", "workers cannot be 'two'")):
        with pytest.raises(SystemExit, match=message):
            load_config(["--workers", bad], environ={})


def test_a_worker_gets_every_setting_and_a_name_of_its_own() -> None:
    config = load_config(
        ["--node-id", "edge", "--workers", "4", "--grace-period", "2.5", "--daily-secret", "s3"],
        environ={},
    )
    env = worker_environment(config, 3, 4321, "unix:///tmp/r.sock")
    expected = replace(
        config, node_id="edge-w3", port=4321, redis_url="unix:///tmp/r.sock", workers=1, reuse_port=True
    )
    assert load_config([], environ=env) == expected
    assert "SCORPION_WEB_DIR" not in env  # unset stays unset (None)
    assert load_config([], environ=worker_environment(Config(), 1, 1, "redis://x")).node_id.endswith(
        f"-{os.getpid()}-w1"
    )


def test_one_worker_is_the_node_itself_with_no_supervisor(tmp_path: Path, redis_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORPION_")}
    node = spawn_node({**env, "SCORPION_REDIS_URL": redis_url}, tmp_path / "one.log", "--workers", "1")
    try:
        assert workers_of(node) == []
    finally:
        node.stop()
    assert node.process.returncode == 0


def test_the_supervisor_says_once_where_it_listens_then_where_to_open_it(
    supervised: Supervised, redis_url: str
) -> None:
    node = supervised(redis_url=redis_url)
    assert node.process.stdout is not None
    # spawn_node read the first line, the listening line; the workers' own lines are not passed on.
    line = node.process.stdout.readline()
    assert line == f"scorpion-server: open http://127.0.0.1:{node.port}/ to play in a browser\n"


async def test_connections_are_served_by_every_worker_each_a_node_of_its_own(
    supervised: Supervised, open_client: Any, redis_url: str
) -> None:
    node = supervised(redis_url=redis_url, node_id="sup")
    workers = workers_of(node)
    assert len(workers) == 2
    clients = await one_client_per_worker(node, open_client, workers)
    assert sorted(clients) == workers
    # Each worker is a node of its own in Redis, named after the supervisor's node id.
    store = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        await asyncio.to_thread(
            wait_until, lambda: len(store.zrange("nodes", 0, -1)) >= 2, "both workers heartbeat"
        )
        names = {instance.split("#")[0] for instance in store.zrange("nodes", 0, -1)}
    finally:
        store.close()
    assert names == {"sup-w1", "sup-w2"}
    assert all(f"started worker {i}: pid " in node.logged() for i in (1, 2))
    assert all(f": pid {pid}" in node.logged() for pid in workers)


async def test_a_race_and_its_spectator_span_both_workers(
    supervised: Supervised, open_client: Any, redis_url: str
) -> None:
    node = supervised(redis_url=redis_url, test_deals=DEAL, countdown_seconds=0.2)
    workers = workers_of(node)
    on = await one_client_per_worker(node, open_client, workers, names=("Ann", "Bob"))
    ann, bob = on[workers[0]], on[workers[1]]
    room, start, _ = await start_race(ann, bob)
    eve: Client = await open_client(node, "Eve")
    await eve.request({"type": "watch", "room": room["room"]})
    board = Board.new("scorpion", DEAL)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await ann.request(
        {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(move)}
    )
    assert answer["type"] == "accepted", answer
    progress = await bob.expect("progress", player=ann.player)  # from the other worker, through Redis
    assert progress["v"] == answer["v"] and progress["summary"]["moves"] == 1
    watched = await eve.expect("spectate_event", player=ann.player)
    assert watched["v"] == answer["v"]


async def test_a_killed_worker_is_restarted_and_its_racer_resumes(
    supervised: Supervised, open_client: Any, redis_url: str
) -> None:
    node = supervised(redis_url=redis_url, test_deals=DEAL, countdown_seconds=0.2)
    workers = workers_of(node)
    on = await one_client_per_worker(node, open_client, workers, names=("Ann", "Bob"))
    victim, survivor = workers
    ann, bob = on[victim], on[survivor]
    _room, start, _ = await start_race(ann, bob)
    board = Board.new("scorpion", DEAL)
    moves = [m for m in board.legal_moves() if not m.is_deal][:2]
    answer = await ann.request(
        {"type": "move", "game": start["game"], "v": start["v"], "move": move_json(moves[0])}
    )
    assert answer["type"] == "accepted", answer
    board.push(moves[0])

    os.kill(victim, signal.SIGKILL)
    await ann.expect("_closed")
    # The port serves on meanwhile (the surviving worker), and the supervisor starts a new one.
    assert (await open_client(node, "Meanwhile")).welcome["type"] == "welcome"
    await asyncio.to_thread(wait_until, lambda: len(workers_of(node)) == 2, "a new worker runs")
    replacement = next(pid for pid in workers_of(node) if pid != survivor)
    assert replacement != victim
    await asyncio.to_thread(
        wait_until,
        lambda: f"pid {replacement} replaces pid {victim}" in node.logged(),
        "the restart is logged",
    )
    assert f"(pid {victim}) exited with code -9" in node.logged()
    assert sorted(await one_client_per_worker(node, open_client, [survivor, replacement])) == sorted(
        [survivor, replacement]
    )

    # Ann comes back, on whichever worker, and races on from where she was.
    again: Client = await open_client(node, "Ann", token=ann.token)
    assert again.welcome["games"] == [start["game"]]
    batch = await again.request({"type": "resume", "game": start["game"], "v": answer["v"]})
    assert batch["type"] == "batch", batch
    legal = next(m for m in board.legal_moves() if not m.is_deal)
    moved = await again.request(
        {"type": "move", "game": start["game"], "v": batch["v"], "move": move_json(legal)}
    )
    assert moved["type"] == "accepted", moved
    progress = await bob.expect("progress", player=ann.player, v=moved["v"])
    assert progress["summary"]["moves"] == 2


async def test_sigterm_closes_clients_with_1012_stops_workers_and_store_and_exits_0(
    supervised: Supervised, open_client: Any, tmp_path: Path
) -> None:
    node = supervised("--data-dir", str(tmp_path / "data"))  # no Redis URL: the embedded store
    workers = workers_of(node)
    store = store_of(node)
    clients = await one_client_per_worker(node, open_client, workers)
    # Both workers use the one store: a player known to one is known to the other.
    first, second = clients[workers[0]], clients[workers[1]]
    back: Client = await open_client(node, "Again", token=first.token)
    assert back.player == first.player != second.player

    node.process.send_signal(signal.SIGTERM)
    for client in (*clients.values(), back):
        await client.expect("_closed")
        assert client.ws.close_code == 1012
    assert await asyncio.to_thread(node.process.wait, 30) == 0
    for pid in (*workers, store):
        assert not is_running(pid), f"process {pid} outlived the supervisor"
    assert "stopping workers" in node.logged()
