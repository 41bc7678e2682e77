"""The default deployment: ``scorpion-server`` with no Redis URL, on its own embedded store.

This is what the README's first command runs. The server starts a private valkey-server
on a unix socket in its data folder, with append-only persistence; a game must outlive
both a clean stop and a crash of the server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from protocol.game import Board, move_json, player_view
from server.lifeline import die_with_parent
from tests.conftest import child_pids, is_running, stop_process

from .conftest import ROOT, Client, Node

pytestmark = pytest.mark.asyncio

DEAL = 424242424242


def start_default_node(data_dir: Path, log: Path) -> Node:
    """Start ``scorpion-server`` as a user does: no Redis URL, a data folder of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCORPION_")}
    env.update({"SCORPION_TEST_DEALS": str(DEAL), "SCORPION_LOG_FORMAT": "text"})
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.main",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log.open("a"),
        text=True,
        preexec_fn=die_with_parent,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r":(\d+)/", line)
    if match is None:
        stop_process(process, signal.SIGKILL)
        raise AssertionError(f"the server did not start: {line!r}\n{log.read_text()}")
    return Node(process, int(match.group(1)))


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
    open_client: Any, tmp_path: Path
) -> None:
    data, log = tmp_path / "d", tmp_path / "server.log"
    node = start_default_node(data, log)
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

    node = start_default_node(data, log)
    ann = await open_client(node, "Ann", token=ann.token)
    saved = await ann.request({"type": "saved_games"})
    assert [g["game"] for g in saved["games"]] == [game]
    snapshot = await resume(ann, game, board, 2)
    await play_one(ann, game, snapshot["v"], board)

    # A crash (SIGKILL): the kernel stops the store, and no acknowledged move is lost.
    store = store_of(node)
    node.stop(signal.SIGKILL)
    wait_ended(store)
    node = start_default_node(data, log)
    ann = await open_client(node, "Ann", token=ann.token)
    await resume(ann, game, board, 3)
    node.stop(signal.SIGTERM)
    assert node.process.returncode == 0, log.read_text()
