"""The ``scorpion`` subcommands that talk to a server, run in-process."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import re
from importlib import metadata
from pathlib import Path

import pytest

from client.api import ScorpionClient, room_link
from client.cli import build_parser, main
from client.commands.watch import is_room_code
from client.identity import Identity, TokenStore

from .conftest import PASSWORD, NodeFactory

SOLO_DEAL = 1234567890123


def test_watch_without_a_target_lists_the_live_races_and_stores_the_identity(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    assert main(["watch", "--server", node.url, "--name", "Viewer"]) == 0
    assert "no race is running" in capsys.readouterr().out
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.name == "Viewer"


def test_version_prints_the_installed_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"scorpion {metadata.version('scorpion-race')}"


def test_every_subcommand_is_in_the_client_guide_s_table() -> None:
    """docs/client.md lists each ``scorpion`` command, and each action of those that have
    them (``challenge new``, ``take``, ...), as a row of its table."""

    def actions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(found[0].choices) if found else {}

    guide = (Path(__file__).parents[2] / "docs" / "client.md").read_text()
    rows = "\n".join(line for line in guide.splitlines() if line.startswith("| `scorpion "))
    commands = [
        f"{name} {action}" if action else name
        for name, parser in actions(build_parser()).items()
        for action in (actions(parser) or [""])
    ]
    assert len(commands) > 20
    missing = [c for c in commands if f"`scorpion {c}" not in rows]
    assert not missing, f"not in docs/client.md's table of commands: {missing}"


def test_forget_me_without_a_stored_identity_erases_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forget-me", "--yes", "--server", "ws://127.0.0.1:9/"]) == 0
    assert "nothing to forget" in capsys.readouterr().out


def test_an_unreachable_server_is_reported_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--server", "ws://127.0.0.1:9/"]) == 1
    assert "cannot connect" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay", ""], "the game id must be 1 to 32 letters, digits, '-' or '_', not ''"),
        (["analyze", "g" * 40], "the game id must be 1 to 32 letters, digits, '-' or '_', not 'ggg"),
        (["watch", "é" * 10], "the game id must be 1 to 32 letters, digits, '-' or '_', not 'éé"),
        (["race", "join", "1"], "the room code must be 6 characters from 23456789ABCDEFGHJKMNPQRSTUVWXYZ"),
        (["stats", "--name", "x" * 40], "the name (--name) must be 1 to 24 characters"),
        (["stats", "--name", "a\u200bb"], "the name (--name) must contain printable characters only"),
    ],
)
def test_a_game_id_room_code_or_name_the_protocol_refuses_is_reported_in_one_line(
    args: list[str], message: str, start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    assert main([*args, "--server", node.url]) == 2
    err = capsys.readouterr().err
    assert f"scorpion {args[0]}: {message}" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("server", "reason"),
    [
        ("bogus", "the scheme is not ws or wss"),
        ("http://127.0.0.1:8765/", "the scheme is not ws or wss"),
        ("ws://[::1", "it is not a URL"),
    ],
)
def test_a_server_that_is_not_a_websocket_url_is_refused_in_one_line(
    server: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["stats", "--server", server])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --server: {server!r} is not a server URL ({reason})" in err
    assert "Traceback" not in err and "cannot connect" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze", "g1", "--wait", "-1"], "--wait: must be a number of seconds, 0 or more, not '-1'"),
        (["analyze", "g1", "--wait", "nan"], "--wait: must be a number of seconds, 0 or more, not 'nan'"),
        (["analyze", "g1", "--wait", "soon"], "--wait: not a number of seconds: 'soon'"),
        (["bot", "--quick", "--count", "0"], "--count: must be at least 1, not 0"),
        (
            ["bot", "--quick", "--delay", "-0.5"],
            "--delay: must be a number of seconds, 0 or more, not '-0.5'",
        ),
        (["bot", "--quick", "--delay", "inf"], "--delay: must be a number of seconds, 0 or more, not 'inf'"),
        (["leaderboard", "--limit", "0"], "--limit: must be 1 to 100, not 0"),
        (["leaderboard", "--limit", "ten"], "--limit: not a whole number: 'ten'"),
        (["leaderboard", "--offset=-1"], "--offset: must be 0 to 2147483647, not -1"),
        (["leaderboard", "--around-me", "--radius", "99"], "--radius: must be 0 to 50, not 99"),
        (["play", "--replay", ""], "--replay: a game id is 1 to 32 letters, digits, '-' or '_', not ''"),
    ],
)
def test_waits_delays_counts_pages_and_ids_that_mean_nothing_are_refused_before_connecting(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # No server is given: a refused value never gets as far as connecting to one.
    with pytest.raises(SystemExit) as exited:
        main([*args, "--server", "ws://127.0.0.1:9/"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "cannot connect" not in captured.err


def test_room_links_point_at_the_web_client_and_room_codes_are_told_from_game_ids() -> None:
    assert room_link("ws://example.org:8765/", "K7MQ2X") == "http://example.org:8765/?room=K7MQ2X"
    assert room_link("wss://example.org/", "K7MQ2X") == "https://example.org/?room=K7MQ2X"
    assert is_room_code("k7mq2x") and not is_room_code("G7K2M9QXab")


def test_the_token_store_keeps_one_identity_per_server() -> None:
    store = TokenStore()
    store.save("ws://a/", Identity("t" * 20, "Ann", "p1"))
    store.save("ws://b", Identity("u" * 20, "Bob", "p2"))
    assert store.load("ws://a") == Identity("t" * 20, "Ann", "p1")
    assert store.load("ws://b/") == Identity("u" * 20, "Bob", "p2")
    store.forget("ws://a/")
    assert store.load("ws://a/") is None and store.load("ws://b/") is not None


async def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``scorpion ARGV`` in a thread (it runs its own event loop); return code, out, err."""
    code = await asyncio.to_thread(main, list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.asyncio
async def test_leaderboard_stats_daily_replay_and_forget_me_print_the_servers_answers(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # a fixed solo deal that still has moves once its reserve is dealt (a random one may not,
    # and would end the game as stuck before the resignation)
    node = start_node(test_deals=str(SOLO_DEAL))
    url = node.url
    ann = ScorpionClient(url, "Ann", store=TokenStore())
    await ann.connect()
    await ann.register("ann", PASSWORD)
    daily = await ann.daily_start()
    await ann.resign()
    await ann.race_ended(daily.game, timeout=10)
    solo = await ann.solo_new("wasp")
    await ann.deal()
    await ann.resign()
    await ann.race_ended(solo.game, timeout=10)
    await ann.close()
    await asyncio.sleep(0.1)
    day = dt.datetime.now(dt.UTC).date().isoformat()

    code, out, _ = await run_cli(capsys, "leaderboard", "--server", url)
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"daily leaderboard · scorpion · {day} · 1 player"
    assert lines[1].split() == ["rank", "name", "score", "time", "ended", "finished", "(UTC)"]
    assert re.fullmatch(rf"   1  Ann \(you\) +0 +0:\d\d  resigned  {day} \d\d:\d\d", lines[2]), lines[2]
    assert lines[3:] == ["your rank: 1 of 1"]
    code, out, _ = await run_cli(capsys, "leaderboard", "--server", url, "--around-me", "--limit", "5")
    assert code == 0 and "Ann (you)" in out and out.splitlines()[-1] == "your rank: 1 of 1"
    code, out, _ = await run_cli(capsys, "leaderboard", "--server", url, "--variant", "wasp", "--day", day)
    assert code == 0 and out.splitlines() == [
        f"daily leaderboard · wasp · {day} · 0 players",
        "nobody is on this board",
    ]

    code, out, _ = await run_cli(capsys, "stats", "--server", url)
    assert code == 0 and [line.split() for line in out.splitlines()] == [
        [
            "variant",
            "played",
            "won",
            "win",
            "%",
            "best",
            "best",
            "time",
            "average",
            "streak",
            "longest",
            "dailies",
        ],
        ["scorpion", "1", "0", "0", "0", "-", "0", "0", "0", "1"],
        ["wasp", "1", "0", "0", "0", "-", "0", "0", "0", "0"],
    ]
    code, out, _ = await run_cli(capsys, "stats", "--server", url, "--variant", "wasp")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["variant", "wasp"]

    code, out, _ = await run_cli(capsys, "daily", "--info", "--server", url)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"daily {day} · scorpion · ends ")
    assert lines[1] == f"commitment {daily.commitment}"
    assert lines[2:] == [
        "your ranked attempt is over (practice with --practice)",
        "yesterday: no deal to reveal",
    ]
    code, out, err = await run_cli(capsys, "daily", "--server", url)
    assert code == 4 and "--practice" in err

    code, out, _ = await run_cli(capsys, "replay", solo.game, "--server", url)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"game {solo.game} · wasp · started ")
    assert re.fullmatch(rf"deal {SOLO_DEAL} \(salt [0-9a-f]+\)", lines[1])
    assert f"Ann ({ann.player}): 1 move" in lines
    assert re.fullmatch(r" +1 +0:\d\d\.\d  deal", lines[lines.index(f"Ann ({ann.player}): 1 move") + 1])
    assert lines[-1].split()[:3] == ["1.", "Ann", "0"] and lines[-1].endswith("resigned")

    code, out, _ = await run_cli(capsys, "play", "--list", "--server", url)
    assert code == 0 and out == "no saved game\n"

    code, out, _ = await run_cli(capsys, "forget-me", "--yes", "--server", url)
    assert code == 0 and out.splitlines() == [
        f"{url} forgot you. Removed:",
        "  identity                 yes",
        "  saved games              0",
        "  statistics               2",
        "  leaderboard entries      1",
        "  names in finished games  2",
        "  sessions                 1",
        "  ratings                  0",
        "  daily attempts           1",
        "the stored token is deleted: the next session starts a new identity",
    ]
    assert TokenStore().load(url) is None
    code, out, _ = await run_cli(capsys, "leaderboard", "--server", url, "--name", "Bob")
    assert code == 0 and out.splitlines()[1:] == ["nobody is on this board"]


@pytest.mark.asyncio
async def test_forget_me_asks_for_confirmation_and_keeps_everything_on_no(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = start_node()
    assert await asyncio.to_thread(main, ["watch", "--server", node.url, "--name", "Kept"]) == 0
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    code, out, _ = await run_cli(capsys, "forget-me", "--server", node.url)
    assert code == 1 and "nothing was erased" in out
    assert TokenStore().load(node.url) is not None
