"""The pure core of a game in flight, without a node: what each recipient receives of an
event (above all, what a spectator may see), and a race's standings."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from protocol.game import DEAL, Board, ReserveRule, Status, card_text, move_text, summary_data, view_data
from protocol.wire.message import Accepted, Options, Progress, RaceEnded, RaceStarted, SpectateEvent
from server.game.live import (
    LiveGame,
    game_event,
    project,
    race_ended_event,
    race_started_event,
    rank_racers,
)

NUMBER = 31415926535
START = 1_000_000


def live_game(mode: str = "race", limit_ms: int = 0, paused: list[tuple[int, int]] | None = None) -> LiveGame:
    roster = [("ann", "Ann"), ("bob", "Bob")]
    game = LiveGame(
        game_id="G1",
        variant="scorpion",
        rule=ReserveRule.ANY_TIME,
        options=Options(),
        start=START,
        number=NUMBER,
        salt="00ff",
        commitment="c0ffee",
        roster=roster,
        room=None,
        time_limit_ms=limit_ms,
        mode=mode,
        daily="2026-12-05" if mode in ("daily", "practice") else None,
        paused=paused or [],
    )
    game.status = {pid: "playing" for pid, _ in roster}
    return game


def face_down_texts(board: Board) -> set[str]:
    """Every card of ``board`` its player cannot see: face down in a column, or in the stock."""
    columns = zip(board.columns, board.down, strict=True)
    hidden = {card_text(card) for col, down in columns for card in col[:down]}
    return hidden | {card_text(card) for card in board.stock}


def shown_texts(view: dict[str, object]) -> set[str]:
    columns = view["columns"]
    assert isinstance(columns, list)
    return {card for col in columns for card in col if card is not None}


def test_a_spectator_never_receives_a_face_down_card_along_a_whole_game() -> None:
    game = live_game()
    board = Board.new("scorpion", NUMBER)
    rng = random.Random(7)
    checked = 0
    for version in range(2, 200):
        moves = board.legal_moves()
        if not moves:
            break
        move = rng.choice(moves)
        board.push(move)
        status = board.status()
        event = game_event(
            "move",
            player="ann",
            action="deal" if move == DEAL else "move",
            move=move_text(move),
            view=view_data(board),
            summary=summary_data(board, 3, status),
            status="playing",
            origin="n1/",
            at=START + version,
        )
        seen = project(game, version, event, None)
        assert isinstance(seen, SpectateEvent)
        hidden = face_down_texts(board)
        assert not shown_texts(seen.view) & hidden, f"a face-down card reached a spectator at v{version}"
        # every masked place is face down on the board, and every face-down card is masked
        columns = seen.view["columns"]
        assert isinstance(columns, list)
        assert [sum(card is None for card in col) for col in columns] == list(board.down)
        checked += 1
        if status is not Status.IN_PLAY:
            break
    assert checked > 20, "the game ended before the check meant anything"


def test_a_racer_gets_their_own_view_and_a_rival_only_the_progress() -> None:
    game = live_game()
    board = Board.new("scorpion", NUMBER)
    move = board.legal_moves()[0]
    board.push(move)
    summary = summary_data(board, 1, board.status())
    event = game_event(
        "move", player="ann", action="move", move=move_text(move), view=view_data(board),
        summary=summary, status="playing", origin="n1/", at=START,
    )  # fmt: skip
    own = project(game, 2, event, "ann")
    assert isinstance(own, Accepted) and own.view == event["view"] and own.v == 2
    rival = project(game, 2, event, "bob")
    assert isinstance(rival, Progress)
    assert rival.player == "ann" and rival.summary == summary
    assert "view" not in rival.to_dict()


def test_the_opening_goes_to_racers_only() -> None:
    game = live_game()
    event = race_started_event(Board.new("scorpion", NUMBER), START)
    assert project(game, 1, event, None) is None
    started = project(game, 1, event, "bob")
    assert isinstance(started, RaceStarted)
    assert started.commitment == "c0ffee" and not shown_texts(started.view) & face_down_texts(
        Board.new("scorpion", NUMBER)
    )


@pytest.mark.parametrize("mode", ["daily", "practice"])
def test_a_daily_game_ends_without_revealing_its_deal(mode: str) -> None:
    game = live_game(mode)
    event = race_ended_event(game, [], START)
    assert "number" not in event and "salt" not in event
    for viewer in (None, "ann"):
        ended = project(game, 9, event, viewer)
        assert isinstance(ended, RaceEnded)
        assert ended.number is None and ended.salt is None


def test_a_race_ends_revealing_its_deal_as_text_to_everyone() -> None:
    game = live_game()
    event = race_ended_event(game, [], START)
    for viewer in (None, "bob"):
        ended = project(game, 9, event, viewer)
        assert isinstance(ended, RaceEnded)
        assert ended.number == str(NUMBER) and ended.salt == "00ff"


# ---------------------------------------------------------------- standings


@dataclass
class Result:
    player_id: str
    name: str
    status: str
    fields: dict[str, str] = field(default_factory=dict)


def result(player: str, status: str, runs: int, finished: int | None = None) -> Result:
    fields = {"summary": f'{{"runs": {runs}}}'}
    if finished is not None:
        fields["finished"] = str(finished)
    return Result(player, player.title(), status, fields)


def test_standings_order_by_score_then_how_each_ended_then_time_or_stay() -> None:
    # The worked example of decision 12, in a race with a ten-minute limit that ran out.
    game = live_game(limit_ms=600_000)
    game.roster = [(name, name.title()) for name in ("cat", "ann", "bob", "dan", "eve", "fay", "gus")]
    now = START + 600_000
    standings, finished = rank_racers(
        game,
        [
            result("cat", "resigned", 1, START + 40_000),  # 100 points, gave up at 40 s
            result("ann", "finished", 4, START + 90_000),  # 100*4 + 500 + 1200 - 90
            result("bob", "playing", 2),  # 200 points at the time limit
            result("dan", "finished", 4, START + 60_000),  # the same, 30 s sooner
            result("eve", "left", 1, START + 70_000),  # 100 points, stayed until 70 s
            result("fay", "stuck", 2, START + 50_000),  # 200 points, no move left at 50 s
            result("gus", "stuck", 1, START + 30_000),  # 100 points, but played it out
        ],
        now + 5_000,
    )
    assert [row["player"] for row in standings] == ["dan", "ann", "fay", "bob", "gus", "eve", "cat"]
    assert [row["score"] for row in standings] == [2040, 2010, 200, 200, 100, 100, 100]
    assert [row["elapsed"] for row in standings] == [60, 90, 50, 600, 30, 70, 40]
    # Stuck and out of time on the same score are level: one rank, listed by who stopped first.
    assert [row["rank"] for row in standings] == [1, 2, 3, 3, 5, 6, 7]
    assert finished["bob"] == now and finished["dan"] == START + 60_000


def test_at_zero_points_the_racer_who_played_on_ranks_above_the_one_who_resigned_first() -> None:
    game = live_game(limit_ms=10_000)
    standings, _ = rank_racers(
        game, [result("bob", "resigned", 0, START + 4_000), result("ann", "playing", 0)], START + 10_000
    )
    assert [(row["player"], row["rank"], row["elapsed"]) for row in standings] == [
        ("ann", 1, 10),
        ("bob", 2, 4),
    ]


def test_of_two_who_resigned_with_equal_scores_the_one_who_stayed_longer_ranks_higher() -> None:
    game = live_game(limit_ms=10_000)
    standings, _ = rank_racers(
        game,
        [result("bob", "resigned", 0, START + 4_000), result("ann", "resigned", 0, START + 7_000)],
        START + 7_000,
    )
    assert [(row["player"], row["rank"]) for row in standings] == [("ann", 1), ("bob", 2)]


def test_racers_level_on_score_ending_and_time_share_a_rank() -> None:
    game = live_game()
    game.roster = [("ann", "Ann"), ("bob", "Bob"), ("cat", "Cat")]
    standings, _ = rank_racers(
        game,
        [
            result("bob", "finished", 4, START + 80_900),  # 80 s on the clock, as for Ann
            result("ann", "finished", 4, START + 80_200),
            result("cat", "resigned", 0, START + 80_500),
        ],
        START + 81_000,
    )
    assert [(row["player"], row["score"], row["rank"]) for row in standings] == [
        ("ann", 2020, 1),  # level with Bob, listed first: she finished 0.7 s sooner
        ("bob", 2020, 1),
        ("cat", 0, 3),
    ]


def test_a_racer_still_playing_is_scored_as_of_the_time_limit() -> None:
    game = live_game(limit_ms=30_000)
    standings, finished = rank_racers(game, [result("ann", "playing", 3)], START + 45_000)
    assert standings[0]["elapsed"] == 30 and finished["ann"] == START + 30_000


def test_outages_of_the_store_are_left_off_the_standings_clock() -> None:
    game = live_game(paused=[(START + 10_000, START + 25_000)])
    standings, _ = rank_racers(game, [result("ann", "finished", 4, START + 95_000)], START + 99_000)
    assert standings[0]["elapsed"] == 80  # 95 s, less the 15 s Redis was away
    assert standings[0]["score"] == 400 + 500 + 1200 - 80
