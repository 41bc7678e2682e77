"""The library and the terminal client with rated races: changes, profiles, boards, replays."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client.api import ScorpionClient
from client.cli import build_parser, main
from client.commands.profile import format_profile
from client.commands.ratings import format_rating_page
from client.errors import ServerError
from client.identity import TokenStore
from client.tui import ScorpionApp
from client.tui.render import render_standings
from protocol.game import Board, move_from_json, player_view
from protocol.solver import Budget, solve_deal
from protocol.wire.message import MatchFound, RaceStarted, RatingChange
from tests.client.conftest import ClientFactory, NodeFactory, accounts_only, racing, start_race
from tests.client.test_cli import run_cli
from tests.client.test_tui import until

WINNABLE = 1_000_000_000_007
"""A deal the solver wins at once; its line finishes the first run at its 46th move."""


async def play_to_the_first_run(client: ScorpionClient) -> None:
    """Play the solver's line of WINNABLE until the first King-to-Ace run is finished."""
    board = Board.new("scorpion", WINNABLE)
    for move in solve_deal("scorpion", WINNABLE, budget=Budget(nodes=50_000)).moves:
        await (client.deal() if move.is_deal else client.move(move))
        board.push(move)
        if board.runs:
            return
    raise AssertionError("the line finished no run")


@pytest.fixture
def make_client(make_client: ClientFactory) -> ClientFactory:
    """Every client of this file is an account: ranked play needs one."""
    return accounts_only(make_client)


async def rated_quick_match(
    start_node: NodeFactory, make_client: ClientFactory, **ann_options: Any
) -> tuple[ScorpionClient, ScorpionClient, str]:
    """Match Ann and Bob (on two nodes) in the rated queue on WINNABLE; Bob resigns at 0
    points, Ann plays on to her first finished run (100 points), then resigns: Ann wins."""
    first, second = start_node(test_deals=str(WINNABLE)), start_node()
    ann = await make_client(first, "Ann", **ann_options)
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
    await bob.resign()
    await play_to_the_first_run(ann)
    await ann.resign()
    await ann.race_ended(started.game, timeout=10)
    return ann, bob, started.game


async def test_the_terminal_client_offers_no_undo_and_no_hint_in_a_rated_race(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    # The room asks for the defaults (undo and hints on): a rated race has neither.
    _, (ann, _bob), _ = await racing(start_node, make_client, 1234567890123, "Ann", "Bob", rated=True)
    app = ScorpionApp(ann)
    async with app.run_test(size=(100, 24)) as pilot:
        await until(lambda: ann.race is not None)
        race = ann.race
        assert race is not None and race.options.rated and not (race.options.undo or race.options.hints)
        # The key legend is the screen's last line once the race screen is laid out.
        await until(lambda: "pick" in app.screen_text().splitlines()[-1])
        screen = app.screen_text()
        keys = screen.splitlines()[-1]
        assert "rated" in screen.splitlines()[0] and "pick" in keys and "deal" in keys, screen
        assert "undo" not in keys and "hint" not in keys, keys
        assert "(7H:2-5, deal, resign)" in screen, "the command line's prompt offers neither"
        await pilot.press("u", "h")
        await pilot.pause(0.2)
        assert race.v == 1, "the keys ask the server nothing"
        assert app.note == "hints are off in a rated race: every racer plays without them", "they say why"
        app.command("undo")
        assert app.note == "undo is off in a rated race: every racer plays without them"
        app.command("hint")
        assert app.note == "hints are off in a rated race: every racer plays without them" and race.v == 1


async def test_both_racers_get_the_rating_change_and_it_matches_their_profiles(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, bob, game = await rated_quick_match(start_node, make_client)
    ann_change = await ann.rating_change(game, timeout=10)
    bob_change = await bob.rating_change(game, timeout=10)
    assert ann_change == bob_change and ann_change.variant == "scorpion"
    assert bob.rating_changes == {game: bob_change}
    # Both gave up with equal scores, so the standings' tie-break places them: the first
    # goes up, the second down, by the same amount (equal ratings and deviations before).
    ended = ann.results[game]
    first, second = (s.player for s in ended.standings)
    winner, loser = (ann, bob) if first == ann.player else (bob, ann)
    assert {first, second} == {ann.player, bob.player}
    by_player = {c.player: c for c in ann_change.changes}
    assert set(by_player) == {ann.player, bob.player}
    assert by_player[first].after > 1500 > by_player[second].after
    assert by_player[first].after - 1500 == 1500 - by_player[second].after
    assert all(c.before == 1500 and c.provisional and c.deviation < 350 for c in ann_change.changes)
    assert {c.name for c in ann_change.changes} == {"Ann", "Bob"}
    for client in (winner, loser):
        own = await client.profile()
        delta = by_player[client.player]
        assert own.me and own.player == client.player
        assert [(r.variant, r.rating, r.deviation, r.games, r.provisional) for r in own.ratings] == [
            ("scorpion", delta.after, delta.deviation, 1, True)
        ]
        assert own.ratings[0].rank == (1 if client is winner else 2)
        recent = own.recent[0]
        assert (recent.game, recent.mode, recent.racers, recent.rated) == (game, "race", 2, True)
        assert recent.change == delta.after - delta.before
        assert recent.rank == (1 if client is winner else 2) and recent.status == "resigned"
    theirs = await loser.profile(winner.player)
    assert not theirs.me and theirs.name == winner.name
    assert theirs.ratings == (await winner.profile()).ratings
    with pytest.raises(ServerError) as missing:
        await ann.profile("p0000000000000000")
    assert missing.value.code == "no_such_player"
    # The push is in the event stream too, after the race's end.
    seen = []
    async for event in bob.events():
        seen.append(type(event).__name__)
        if isinstance(event, RatingChange):
            assert event == bob_change
            break
    assert "RaceEnded" in seen[:-1]


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
    board = Board.new("scorpion", WINNABLE)
    assert positions.views[0] == player_view(board).as_dict()
    assert len(positions.moves) == 46 == len(positions.views) - 1  # up to Ann's first run
    for move, view in zip(positions.moves, positions.views[1:], strict=True):
        board.push(move_from_json(move))
        assert view == player_view(board).as_dict()


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
    assert waiting.startswith("Rated race over") and waiting.count("rating …") == 2
    watched = render_standings(ended, "race", rated=True, awaited=False).plain
    assert watched.startswith("Rated race over") and "rating" not in watched.replace("Rated", "")
    change = await ann.rating_change(game, timeout=10)
    shown = render_standings(ended, "race", rated=True, changes=change).plain
    assert "…" not in shown
    for c in change.changes:
        line = next(line for line in shown.splitlines() if c.name in line)
        assert line.endswith(f"rating 1500 → {c.after}? {c.after - c.before:+d}"), line
        assert c.after != c.before


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
    await ann.race_ended(started.game, timeout=10)
    with pytest.raises(TimeoutError):
        await ann.rating_change(started.game, timeout=1.5)


async def test_the_profile_and_ratings_commands_print_the_servers_answers(
    start_node: NodeFactory, make_client: ClientFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    ann, bob, game = await rated_quick_match(start_node, make_client, store=TokenStore())
    change = await ann.rating_change(game, timeout=10)
    mine = next(c for c in change.changes if c.player == ann.player)
    theirs = next(c for c in change.changes if c.player == bob.player)
    ann_rank = 1 if mine.after > theirs.after else 2
    url = ann.url  # the CLI runs as Ann: her token is the one stored for this server

    code, out, _ = await run_cli(capsys, "profile", "--server", url)
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"Ann ({ann.player}) · you"
    rating = next(line for line in lines if line.startswith("  scorpion ") and "rated" in line)
    best = str(mine.after)  # the highest rating reached in a rated race
    assert rating.split() == [
        "scorpion",
        f"{mine.after}?",
        f"±{mine.deviation}",
        "1",
        "rated",
        "rank",
        f"#{ann_rank}",
        "best",
        best,
    ]
    stats = lines[lines.index("statistics") + 2].split()
    assert stats[:3] == ["scorpion", "1", "0"]  # played once, and resigned
    recent = lines[lines.index("recent games (scorpion replay GAME to step through one)") + 1].split()
    assert recent[0] == game and recent[3:] == [
        "scorpion",
        "race",
        f"{ann_rank}/2",
        "100",  # Ann's first run
        "resigned",
        "rated",
        f"{mine.after - mine.before:+d}",
    ]

    code, out, _ = await run_cli(capsys, "profile", bob.player, "--server", url, "--variant", "wasp")
    assert code == 0 and out.splitlines() == [
        f"Bob ({bob.player})",
        "",
        "ratings (? = provisional: too few recent rated races)",
        "  no rated races yet",
        "",
        "statistics",
        "  no games played yet",
        "",
        "recent games (scorpion replay GAME to step through one)",
        "  none kept",
    ]
    code, out, _ = await run_cli(capsys, "profile", bob.player, "--server", url)
    assert code == 0 and out.splitlines()[0] == f"Bob ({bob.player})", "not marked as the asker's own"
    assert f"{theirs.after}?" in out and game in out

    code, out, _ = await run_cli(capsys, "ratings", "--server", url)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "rating board · scorpion · 2 rated (? = provisional)"
    assert lines[1].split() == ["rank", "rating", "dev", "races", "name"]
    top, second = sorted(change.changes, key=lambda c: -c.after)
    rows = [line.split() for line in lines[2:4]]
    for rank, (row, c) in enumerate(zip(rows, (top, second), strict=True), 1):
        mark = [">"] if c.player == ann.player else []
        assert row == [*mark, str(rank), f"{c.after}?", f"±{c.deviation}", "1", c.name]
    assert lines[4:] == [f"your place: {ann_rank} of 2"]
    code, out, _ = await run_cli(capsys, "ratings", "--server", url, "--around-me", "--limit", "1")
    assert code == 0 and out.splitlines()[2].split() == [
        ">",
        str(ann_rank),
        f"{mine.after}?",
        f"±{mine.deviation}",
        "1",
        "Ann",
    ]
    assert len(out.splitlines()) == 4
    code, out, _ = await run_cli(capsys, "ratings", "--server", url, "--variant", "wasp", "--around-me")
    assert code == 0 and out.splitlines() == [
        "rating board · wasp · 0 rated (? = provisional)",
        "nobody is rated in this variant yet",
    ]
    code, out, err = await run_cli(capsys, "profile", "p0000000000000000", "--server", url)
    assert code == 1 and out == ""
    assert err.startswith("scorpion profile: no_such_player: ")


def test_the_ratings_options_are_checked_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    for args, message in (
        (["--limit", "0"], "--limit: must be 1 to 100, not 0"),
        (["--offset=-3"], "--offset: must be 0 to 2147483647, not -3"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(["ratings", *args, "--server", "ws://127.0.0.1:9/"])
        assert exited.value.code == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["profile", "--variant", "chess", "--server", "ws://127.0.0.1:9/"])
    assert "invalid choice: 'chess'" in capsys.readouterr().err
    parser = build_parser()
    assert not parser.parse_args(["quick"]).unrated and parser.parse_args(["quick", "--unrated"]).unrated
    assert (
        not parser.parse_args(["race", "new"]).rated and parser.parse_args(["race", "new", "--rated"]).rated
    )


async def test_a_friends_room_opts_in_to_rating_and_both_racers_are_rated(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    node = start_node(test_deals=str(WINNABLE))
    ann = await make_client(node, "Ann")
    bob = await make_client(node, "Bob")
    game = await start_race(ann, bob, rated=True)
    assert ann.race is not None and ann.race.options.rated
    await ann.resign()
    await play_to_the_first_run(bob)
    await bob.resign()
    ended = await bob.race_ended(game, timeout=10)
    winner, loser = (s.name for s in ended.standings)
    assert (winner, loser) == ("Bob", "Ann")  # 100 points against 0
    change = await bob.rating_change(game, timeout=10)
    assert (await ann.rating_change(game, timeout=10)) == change
    assert ann.rating_changes[game] == change
    by_name = {c.name: c for c in change.changes}
    assert by_name[winner].after > 1500 > by_name[loser].after
    assert all(c.before == 1500 and c.provisional for c in change.changes)
    # a casual room of the same two changes nothing
    casual = await start_race(ann, bob)
    assert ann.race is not None and not ann.race.options.rated
    await ann.resign()
    await bob.resign()
    await bob.race_ended(casual, timeout=10)
    with pytest.raises(TimeoutError):
        await bob.rating_change(casual, timeout=1.5)
    page = await ann.rating_board()
    assert [(e.name, e.rating, e.games) for e in page.entries] == [
        (winner, by_name[winner].after, 1),
        (loser, by_name[loser].after, 1),
    ]


async def test_the_terminal_client_marks_the_rated_race_shows_the_changes_and_the_profile(
    start_node: NodeFactory, make_client: ClientFactory
) -> None:
    ann, _bob, game = await rated_quick_match(start_node, make_client)
    change = await ann.rating_change(game, timeout=10)
    mine = next(c for c in change.changes if c.player == ann.player)
    app = ScorpionApp(ann)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: "rating:" in app.note)
        # the result's key legend is laid out last (later on a loaded machine)
        await until(lambda: "P profile" in app.screen_text().splitlines()[-1])
        await pilot.pause(0.1)
        screen = app.screen_text()
        lines = screen.splitlines()
        assert " rated " in lines[0], "the status line marks the rated race"
        assert "Rated race over" in screen
        for c in change.changes:
            line = next(line for line in lines if f". {c.name} " in line)
            assert f"rating 1500 → {c.after}? {c.after - c.before:+d}" in line, line
        assert app.note == f"your scorpion rating: 1500 → {mine.after}? ({mine.after - 1500:+d})"
        assert "P profile" in lines[-1], screen
        await pilot.press("P")
        await until(lambda: app.profile is not None)
        await pilot.pause(0.1)
        shown = app.screen_text()
        assert f"Ann  {ann.player}  (you)" in shown
        rating_line = next(line for line in shown.splitlines() if "±" in line)
        assert rating_line.split()[:4] == ["scorpion", f"{mine.after}?", f"±{mine.deviation}", "1"]
        game_line = next(line for line in shown.splitlines() if line.strip().startswith(game))
        assert game_line.split()[1:] == [
            "scorpion",
            "race",
            f"{1 if mine.after > 1500 else 2}/2",
            "100",  # Ann's first run
            f"{mine.after - 1500:+d}",
        ]
        assert "Rated race over" not in shown and app.note.startswith("your profile")
        await pilot.press("escape")
        await pilot.pause(0.1)
        back = app.screen_text()
        assert "Rated race over" in back and app.profile is None and app.note == ""
