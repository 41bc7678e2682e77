"""The ``scorpion`` subcommands that talk to a server, run in-process."""

from __future__ import annotations

import pytest

from client.cli import main
from client.commands.common import room_link
from client.commands.watch import is_room_code
from client.identity import Identity, TokenStore

from .conftest import NodeFactory


@pytest.mark.parametrize("command", [["leaderboard", "--day", "2024-06-01"], ["stats"], ["play"]])
def test_commands_the_server_does_not_offer_yet_say_so_and_fail(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(command) == 3
    captured = capsys.readouterr()
    assert "does not offer" in captured.err and captured.out == ""


def test_watch_without_a_target_lists_the_live_races_and_stores_the_identity(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    assert main(["watch", "--server", node.url, "--name", "Viewer"]) == 0
    assert "no race is running" in capsys.readouterr().out
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.name == "Viewer"


def test_daily_reports_what_the_server_answers(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    code = main(["daily", "--info", "--server", node.url])
    captured = capsys.readouterr()
    if code == 3:
        assert "does not offer" in captured.err
    else:
        assert code == 0 and captured.out.startswith("daily ")


def test_forget_me_without_a_stored_identity_erases_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forget-me", "--yes", "--server", "ws://127.0.0.1:9/"]) == 0
    assert "nothing to forget" in capsys.readouterr().out


def test_forget_me_sends_the_request_and_reports_the_answer(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    assert main(["watch", "--server", node.url, "--name", "Gone"]) == 0
    code = main(["forget-me", "--yes", "--server", node.url])
    captured = capsys.readouterr()
    if code == 0:
        assert TokenStore().load(node.url) is None
    else:
        assert code == 3 and "does not offer" in captured.err
        assert TokenStore().load(node.url) is not None, "the token is kept while the server keeps the player"


def test_an_unreachable_server_is_reported_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--server", "ws://127.0.0.1:9/"]) == 1
    assert "cannot connect" in capsys.readouterr().err


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
