"""The library and the terminal client with rated races: changes, profiles, boards, replays."""

from __future__ import annotations

import asyncio

import pytest

from client.commands.profile import format_profile
from client.commands.ratings import format_rating_page
from client.connection import ScorpionClient, ServerError
from client.tui.render import render_standings
from protocol.game import Board, move_from_json, player_view
from protocol.wire.message import MatchFound, RaceEnded, RaceStarted
from tests.client.conftest import ClientFactory, NodeFactory


async def rated_quick_match(
    start_node: NodeFactory, make_client: ClientFactory
) -> tuple[ScorpionClient, ScorpionClient, str]:
    """Match Ann and Bob (on two nodes) in the rated queue; Bob resigns, then Ann does."""
    first, second = start_node(test_deals="1234567890123"), start_node()
    ann = await make_client(first, "Ann")
    bob = await make_client(second, "Bob")
    queued = await ann.queue_join("scorpion")
    assert queued.rated and queued.rating == 1500
    match = asyncio.ensure_future(ann.wait_for(MatchFound, timeout=15))
    race = asyncio.ensure_future(ann.wait_for(RaceStarted, timeout=15))
    await bob.queue_join("scorpion")  # the match may be made before this answer comes
    await match
    started = await race
    assert started.options.rated
    if bob.race is None or bob.race.game != started.game:
        await bob.wait_for(RaceStarted, timeout=10, game=started.game)
    board = Board.new("scorpion", 1234567890123)
    move = next(m for m in board.legal_moves() if not m.is_deal)
    await ann.move(move)  # Ann plays on and is still playing when Bob gives up
    await bob.resign()
    await ann.resign()
    await ann.wait_for(RaceEnded, timeout=10, game=started.game)
    return ann, bob, started.game


async def test_both_racers_get_the_rating_change_and_it_matches_their_profiles(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, bob, game = await rated_quick_match(start_node, make_client)
    ann_change = await ann.rating_change(game, timeout=10)
    bob_change = await bob.rating_change(game, timeout=10)
    assert ann_change == bob_change
    by_player = {c.player: c for c in ann_change.changes}
    # Both gave up, so their places decide: one goes up, the other down.
    winner, loser = (ann, bob) if by_player[ann.player].after > 1500 else (bob, ann)
    assert by_player[winner.player].after > 1500 > by_player[loser.player].after
    assert all(c.before == 1500 for c in ann_change.changes)
    profile = await winner.profile()
    assert profile.me and profile.ratings[0].rating == by_player[winner.player].after
    assert profile.recent[0].game == game
    assert profile.recent[0].change == by_player[winner.player].after - 1500
    theirs = await loser.profile(winner.player)
    assert not theirs.me and theirs.ratings == profile.ratings
    with pytest.raises(ServerError) as missing:
        await ann.profile("p0000000000000000")
    assert missing.value.code == "no_such_player"


async def test_the_rating_board_and_its_text_table(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, bob, game = await rated_quick_match(start_node, make_client)
    await bob.rating_change(game, timeout=10)
    page = await bob.rating_board("scorpion")
    assert page.total == 2 and {e.player for e in page.entries} == {ann.player, bob.player}
    around = await bob.rating_board("scorpion", around_me=True, limit=1)
    assert [e.player for e in around.entries] == [bob.player] and around.me is not None
    table = format_rating_page(page, bob.player)
    mine = next(line for line in table.splitlines() if line.startswith(">"))
    assert "Bob" in mine and "?" in mine  # provisional after one rated race
    assert "2 rated" in table.splitlines()[0]


async def test_replay_positions_step_through_a_racers_board(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, _bob, game = await rated_quick_match(start_node, make_client)
    positions = await ann.replay_positions(game, ann.player)
    board = Board.new("scorpion", 1234567890123)
    assert positions.views[0] == player_view(board).as_dict()
    assert len(positions.moves) == 1 == len(positions.views) - 1
    board.push(move_from_json(positions.moves[0]))
    assert positions.views[1] == player_view(board).as_dict()


async def test_the_profile_command_prints_ratings_statistics_and_recent_games_with_their_ids(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, _bob, game = await rated_quick_match(start_node, make_client)
    change = await ann.rating_change(game, timeout=10)
    text = format_profile(await ann.profile())
    mine = next(c for c in change.changes if c.player == ann.player)
    assert text.startswith(f"Ann ({ann.player}) · you")
    assert f"{mine.after}?" in text  # provisional
    row = next(line for line in text.splitlines() if game in line)
    assert f"rated {mine.after - 1500:+d}" in row and "race" in row


async def test_the_terminal_standings_show_each_racers_new_rating_and_change(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, _bob, game = await rated_quick_match(start_node, make_client)
    assert ann.race is not None and ann.race.game == game
    ended = ann.race.ended
    assert ended is not None
    waiting = render_standings(ended, "race", rated=True).plain
    assert waiting.startswith("Rated race over") and "rating …" in waiting
    change = await ann.rating_change(game, timeout=10)
    shown = render_standings(ended, "race", rated=True, changes=change).plain
    for c in change.changes:
        line = next(line for line in shown.splitlines() if c.name in line)
        assert f"rating {c.after}? {c.after - c.before:+d}" in line


async def test_an_unrated_quick_match_sends_no_rating_change(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node()
    ann = await make_client(node, "Ann")
    bob = await make_client(node, "Bob")
    assert not (await ann.queue_join("wasp", rated=False)).rated
    race = asyncio.ensure_future(ann.wait_for(RaceStarted, timeout=15))
    await bob.queue_join("wasp", rated=False)
    started = await race
    assert not started.options.rated
    if bob.race is None or bob.race.game != started.game:
        await bob.wait_for(RaceStarted, timeout=10, game=started.game)
    await bob.resign()
    await ann.resign()
    await ann.wait_for(RaceEnded, timeout=10, game=started.game)
    with pytest.raises(TimeoutError):
        await ann.rating_change(started.game, timeout=1.5)
