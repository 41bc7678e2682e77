"""The client library's challenge requests, and ``scorpion challenge list|board``."""

from __future__ import annotations

import asyncio

import pytest

from client.api import ScorpionClient, challenge_link
from client.identity import TokenStore
from protocol.wire.message import Challenge, ChallengeTaken, Progress

from .conftest import NodeFactory
from .test_cli import SOLO_DEAL, run_cli


def test_a_challenge_s_link_opens_the_web_client_on_it() -> None:
    assert challenge_link("ws://example.org:8765/", "Q4MZ7K") == "http://example.org:8765/?challenge=Q4MZ7K"
    assert challenge_link("wss://example.org/", "Q4MZ7K") == "https://example.org/?challenge=Q4MZ7K"


@pytest.mark.asyncio
async def test_a_fresh_deal_played_first_becomes_a_challenge_a_friend_races_and_the_cli_prints_it(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node(test_deals=str(SOLO_DEAL))
    ann = ScorpionClient(node.url, "Ann", store=TokenStore())
    await ann.connect()
    started = await ann.challenge_new()
    assert started.mode == "challenge" and len(started.roster) == 1
    await ann.deal()
    await ann.resign()
    made = await ann.wait_for(Challenge, timeout=10)
    assert [g.name for g in made.ghosts] == ["Ann"] and made.ghosts[0].moves == 1
    bob = ScorpionClient(node.url, "Bob", store=TokenStore())
    await bob.connect()
    # Ann dealt at once: her ghost's progress may come right after the race starts
    waiting = asyncio.create_task(bob.wait_for(Progress, timeout=10, player="ghost-1"))
    await asyncio.sleep(0)  # the waiter is registered before the request goes out
    taking = await bob.challenge_take(made.code.lower())
    assert [r.name for r in taking.roster] == ["Bob", "Ann"]
    ghost = await waiting  # Ann's deal, as a rival's progress
    assert ghost.summary["moves"] == 1
    assert bob.race is not None and bob.race.racers["ghost-1"].summary["moves"] == 1
    # Ann's notice is sent as the race ends: it may reach her before Bob sees the end
    notice = asyncio.create_task(ann.wait_for(ChallengeTaken, timeout=30))
    await asyncio.sleep(0)  # the waiter is registered before the race can end
    await bob.resign()
    await bob.race_ended(taking.game, timeout=10)
    taken = await notice
    assert taken.entry.player == bob.player
    board = await bob.challenge_board(made.code)
    assert [e.name for e in board.entries] == ["Bob"]
    await bob.close()
    await ann.close()

    code, out, _ = await run_cli(capsys, "challenge", "board", made.code, "--server", node.url)
    assert code == 0 and out.splitlines()[0] == f"challenge {made.code} · scorpion", out
    assert "Bob" in out.splitlines()[2]
    code, out, _ = await run_cli(capsys, "challenge", "list", "--server", node.url, "--name", "Ann")
    assert code == 0


@pytest.mark.asyncio
async def test_taking_a_challenge_that_is_not_there_is_refused_in_one_line_before_any_race(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    node = start_node()
    code, out, err = await asyncio.wait_for(
        run_cli(capsys, "challenge", "take", "ZZZZZZ", "--server", node.url), timeout=30
    )
    assert code == 1, (out, err)
    assert "scorpion challenge: no_such_challenge:" in err and "Traceback" not in err, err
    assert "never retrieved" not in err
