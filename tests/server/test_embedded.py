"""The default deployment: ``scorpion-server`` with no Redis URL, on its own embedded store.

This is what the README's first command runs. The server starts a private valkey-server
on a unix socket in its data folder, with append-only persistence; a game must outlive
both a clean stop and a crash of the server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.game import Board, move_json, player_view
from tests.conftest import child_pids, is_running

from .conftest import ROOT, Client, Node, spawn_node

DEAL = 424242424242


def _start_default_node(data_dir: Path, log: Path) -> Node:
    """Start ``scorpion-server`` as a user does: no Redis URL, a data folder of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORPION_")}
    env.update({"SCORPION_TEST_DEALS": str(DEAL), "SCORPION_LOG_FORMAT": "text"})
    return spawn_node(env, log, "--data-dir", str(data_dir))


DefaultNodeFactory = Callable[[Path], Node]


@pytest.fixture
def default_node(tmp_path: Path) -> Iterator[DefaultNodeFactory]:
    """Start default servers (each on the data folder given); all are stopped at the end."""
    nodes: list[Node] = []

    def start(data_dir: Path) -> Node:
        nodes.append(_start_default_node(data_dir, tmp_path / "server.log"))
        return nodes[-1]

    yield start
    for node in nodes:
        node.stop(signal.SIGTERM)


def store_of(node: Node) -> int:
    """Return the pid of the node's embedded store (its valkey-server child)."""
    for pid in child_pids(node.process.pid):
        if "valkey-server" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
            return pid
    raise AssertionError("the server started no embedded store")


def wait_ended(pid: int, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while is_running(pid):
        assert time.monotonic() < deadline, f"process {pid} is still running"
        time.sleep(0.05)


async def play_one(client: Client, game: str, version: int, board: Board) -> int:
    """Play the first legal card move; return the version the server acknowledged."""
    move = next(m for m in board.legal_moves() if not m.is_deal)
    answer = await client.request({"type": "move", "game": game, "v": version, "move": move_json(move)})
    assert answer["type"] == "accepted", answer
    board.push(move)
    return int(answer["v"])


async def resume(client: Client, game: str, board: Board, moves: int) -> dict[str, Any]:
    """Resume ``game``; it must be ``board``, reached in ``moves`` moves."""
    snapshot = await client.request({"type": "solo_resume", "game": game})
    assert snapshot["type"] == "snapshot", snapshot
    assert snapshot["view"] == player_view(board).as_dict()
    assert snapshot["summary"]["moves"] == moves
    return snapshot


async def test_the_default_server_keeps_a_game_through_a_clean_stop_and_a_crash(
    default_node: DefaultNodeFactory, open_client: Any, tmp_path: Path
) -> None:
    data, log = tmp_path / "d", tmp_path / "server.log"
    node = default_node(data)
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "variant": "scorpion"})
    assert start["type"] == "race_started", start
    game, board = start["game"], Board.new("scorpion", DEAL)
    version = await play_one(ann, game, start["v"], board)
    version = await play_one(ann, game, version, board)
    await ann.close()

    # A clean stop (SIGTERM) stops the store with the server.
    store = store_of(node)
    node.stop(signal.SIGTERM)
    assert node.process.returncode == 0, log.read_text()
    wait_ended(store)
    assert (data / "appendonlydir").is_dir(), "the store keeps an append-only file in the data folder"

    node = default_node(data)
    ann = await open_client(node, "Ann", token=ann.token)
    saved = await ann.request({"type": "saved_games"})
    assert [g["game"] for g in saved["games"]] == [game]
    snapshot = await resume(ann, game, board, 2)
    await play_one(ann, game, snapshot["v"], board)

    # A crash (SIGKILL): the kernel stops the store, and no acknowledged move is lost.
    store = store_of(node)
    node.stop(signal.SIGKILL)
    wait_ended(store)
    node = default_node(data)
    ann = await open_client(node, "Ann", token=ann.token)
    await resume(ann, game, board, 3)
    node.stop(signal.SIGTERM)
    assert node.process.returncode == 0, log.read_text()


def stores_in(data_dir: Path) -> list[int]:
    """The running valkey-server processes whose socket is in ``data_dir``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if (
            "valkey-server" in cmdline
            and str(data_dir / "redis.sock") in cmdline
            and is_running(int(entry.name))
        ):
            found.append(int(entry.name))
    return found


def run_to_exit(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a server that is expected to refuse to start (on loopback unless ``--host`` is given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORPION_")}
    host = [] if "--host" in args else ["--host", "127.0.0.1"]
    return subprocess.run(
        [sys.executable, "-m", "server.main", *host, *args],
        cwd=ROOT,
        env={**env, "SCORPION_LOG_LEVEL": "warning"},
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_second_server_on_the_same_data_folder_refuses_and_leaves_the_first_alone(
    default_node: DefaultNodeFactory, open_client: Any, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    first = default_node(data)
    ann: Client = await open_client(first, "Ann")
    start = await ann.request({"type": "solo_new", "variant": "scorpion"})
    board = Board.new("scorpion", DEAL)
    version = await play_one(ann, start["game"], start["v"], board)

    second = run_to_exit("--port", "0", "--data-dir", str(data))
    assert second.returncode == 1, second
    assert "Traceback" not in second.stderr
    assert f"the data directory {data} is in use by another scorpion-server" in second.stderr
    assert f"(pid {first.process.pid})" in second.stderr
    assert stores_in(data) == [store_of(first)], "a second store was started on the same files"

    # The first server and its store are untouched: the game goes on.
    await play_one(ann, start["game"], version, board)
    late: Client = await open_client(first, "Ann", token=ann.token)
    await resume(late, start["game"], board, 2)


async def test_a_server_that_cannot_listen_says_why_and_stops_the_store_it_started(
    default_node: DefaultNodeFactory, tmp_path: Path
) -> None:
    first = default_node(tmp_path / "one")
    other = tmp_path / "two"
    refused = run_to_exit("--port", str(first.port), "--data-dir", str(other))
    assert refused.returncode == 1, refused
    assert "Traceback" not in refused.stderr
    assert f"cannot listen on 127.0.0.1:{first.port}: the port is in use" in refused.stderr
    assert stores_in(other) == [], "the store of a server that failed to start is still running"
    # and it left the data folder free: a server can use it at once
    third = default_node(other)
    assert stores_in(other) == [store_of(third)]


def test_a_data_folder_that_cannot_be_used_is_refused_in_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    for data, reason in ((a_file, "it is not a directory"), (a_file / "d", "Not a directory")):
        refused = run_to_exit("--port", "0", "--data-dir", str(data))
        assert refused.returncode == 1, refused
        assert "Traceback" not in refused.stderr
        assert f"cannot use the data directory {data}: {reason}" in refused.stderr


def test_a_host_that_is_not_this_machines_is_refused_and_leaves_no_store(tmp_path: Path) -> None:
    data = tmp_path / "d"
    # 192.0.2.1 is reserved for documentation: no machine has it, and no name lookup is made.
    refused = run_to_exit("--host", "192.0.2.1", "--port", "0", "--data-dir", str(data))
    assert refused.returncode == 1, refused
    assert "Traceback" not in refused.stderr
    assert "cannot listen on 192.0.2.1:0: that address is not one of this machine's" in refused.stderr
    assert stores_in(data) == []


async def test_a_store_that_dies_is_started_again_and_the_game_goes_on(
    default_node: DefaultNodeFactory, open_client: Any, tmp_path: Path
) -> None:
    node = default_node(tmp_path / "d")
    ann: Client = await open_client(node, "Ann")
    start = await ann.request({"type": "solo_new", "variant": "scorpion"})
    game, board = start["game"], Board.new("scorpion", DEAL)
    version = await play_one(ann, game, start["v"], board)

    # The store is killed outright (as the kernel's out-of-memory killer would).
    store = store_of(node)
    os.kill(store, signal.SIGKILL)
    wait_ended(store)
    deadline = time.monotonic() + 15
    while not (stores_in(tmp_path / "d") and stores_in(tmp_path / "d")[0] != store):
        assert time.monotonic() < deadline, "the store was not started again"
        await asyncio.sleep(0.05)
    assert store_of(node) != store

    # The same connection plays on, and nothing acknowledged was lost.
    deadline = time.monotonic() + 15
    while True:
        move = next(m for m in board.legal_moves() if not m.is_deal)
        answer = await ann.request({"type": "move", "game": game, "v": version, "move": move_json(move)})
        if answer["type"] == "accepted":
            break
        assert answer.get("code") == "unavailable" and time.monotonic() < deadline, answer
        await asyncio.sleep(0.1)
    board.push(move)
    late: Client = await open_client(node, "Ann", token=ann.token)
    await resume(late, game, board, 2)
    assert "embedded server running again" in (tmp_path / "server.log").read_text()
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5) as response:
        assert "scorpion_store_restarts_total 1.0" in response.read().decode()
