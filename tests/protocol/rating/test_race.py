"""A race's standings: their order, and the pairwise games rated from them (2 and 8 racers,
ties, draws on equal score and ending, farmed pairs)."""

from __future__ import annotations

import pytest

from protocol.rating import (
    Ending,
    Placing,
    Rating,
    Result,
    ending_of,
    pair_key,
    pairwise_results,
    rate,
    rate_race,
    standing_key,
)


def test_a_two_racer_race_is_one_game_each_way():
    before = {"ann": Rating(1500, 200), "bob": Rating(1600, 150)}
    after = rate_race(before, [Placing("ann", 1, "finished", 1900), Placing("bob", 2, "stuck", 300)])
    assert after["ann"] == rate(before["ann"], [Result(before["bob"], 1.0)])
    assert after["bob"] == rate(before["bob"], [Result(before["ann"], 0.0)])
    assert after["ann"].rating > 1500 and after["bob"].rating < 1600


def test_an_eight_racer_race_rates_each_racer_against_the_seven_others_from_their_ratings_before():
    names = [f"r{i}" for i in range(8)]
    before = {name: Rating(1400 + 30 * i, 60 + 20 * i) for i, name in enumerate(names)}
    ranked = enumerate(reversed(names), start=1)
    placings = [Placing(name, rank, "finished", 2000 - 10 * rank) for rank, name in ranked]
    after = rate_race(before, placings)
    games = pairwise_results(placings)
    assert all(len(games[name]) == 7 for name in names)
    winner, last = names[-1], names[0]
    assert sorted(score for _, score in games[winner]) == [1.0] * 7
    assert sorted(score for _, score in games[last]) == [0.0] * 7
    for name in names:  # each one rated from everyone's rating before the race
        expected = [Result(before[other], score) for other, score in games[name]]
        assert after[name] == rate(before[name], expected)
    assert after[winner].rating > before[winner].rating
    assert after[last].rating < before[last].rating
    # The middle of the field moves less than either end.
    middle = abs(after["r4"].rating - before["r4"].rating)
    assert middle < after[winner].rating - before[winner].rating


def test_the_kinds_of_ending_go_finished_then_played_out_then_abandoned():
    assert [ending_of(s) for s in ("finished", "stuck", "playing", "resigned", "left")] == [
        Ending.FINISHED,
        Ending.PLAYED_OUT,
        Ending.PLAYED_OUT,
        Ending.ABANDONED,
        Ending.ABANDONED,
    ]
    with pytest.raises(ValueError, match="not a racer status"):
        ending_of("won")


def test_the_standings_order_score_then_ending_then_time_among_finishers_and_stay_among_quitters():
    # The worked example of decision 12: (name, score, status, elapsed seconds).
    racers = [
        ("cat", 100, "resigned", 40),
        ("bob", 200, "playing", 600),
        ("ann", 2010, "finished", 90),
        ("gus", 100, "stuck", 30),
        ("eve", 100, "left", 70),
        ("fay", 200, "stuck", 50),
        ("dan", 2040, "finished", 60),
    ]
    order = sorted(racers, key=lambda r: standing_key(r[1], r[2], r[3]))
    assert [name for name, *_ in order] == ["dan", "ann", "bob", "fay", "gus", "eve", "cat"]
    # Stuck or at the time limit: the time does not count, so Bob and Fay are level.
    assert standing_key(200, "playing", 600) == standing_key(200, "stuck", 50) == (-200, 1, 0)
    # The same score: finishing beats playing on, which beats resigning, whatever the times.
    finished, stuck, left = (900, "finished", 1500), (900, "stuck", 20), (900, "left", 1400)
    assert standing_key(*finished) < standing_key(*stuck) < standing_key(*left)
    # Among racers who resigned or left, the longer stay first; among finishers, the shorter time.
    assert standing_key(0, "resigned", 7) < standing_key(0, "resigned", 4)
    assert standing_key(900, "finished", 1300) < standing_key(900, "finished", 1400)


def test_racers_of_the_same_place_draw():
    placings = [Placing("a", 1, "stuck", 200), Placing("b", 1, "playing", 200), Placing("c", 3, "stuck", 100)]
    games = pairwise_results(placings)
    assert games["a"] == [("b", 0.5), ("c", 1.0)]
    assert games["c"] == [("a", 0.0), ("b", 0.0)]


def test_the_same_score_and_kind_of_ending_draw_even_when_the_time_placed_them_apart():
    # Two finishers past the time bonus (400 + 500 + 0 each) and two who resigned at 0 points.
    placings = [
        Placing("quick", 1, "finished", 900),
        Placing("slow", 2, "finished", 900),
        Placing("stayed", 3, "resigned", 0),
        Placing("quit", 4, "left", 0),
    ]
    games = pairwise_results(placings)
    assert games["quick"] == [("slow", 0.5), ("stayed", 1.0), ("quit", 1.0)]
    assert games["stayed"] == [("quick", 0.0), ("slow", 0.0), ("quit", 0.5)]


def test_the_better_placed_racer_wins_whatever_the_ending():
    # Resigning keeps the points made: three runs resigned beat one run stuck. At equal
    # points, playing on beats giving up.
    placings = [
        Placing("quitter", 1, "resigned", 300),
        Placing("stayer", 2, "playing", 100),
        Placing("slow", 2, "stuck", 100),
        Placing("gone", 4, "left", 100),
    ]
    games = dict(pairwise_results(placings))
    assert games["quitter"] == [("stayer", 1.0), ("slow", 1.0), ("gone", 1.0)]
    assert games["stayer"] == [("quitter", 0.0), ("slow", 0.5), ("gone", 1.0)]
    assert games["gone"] == [("quitter", 0.0), ("stayer", 0.0), ("slow", 0.0)]


def test_two_newcomers_at_zero_points_the_one_who_played_on_wins_and_two_who_resigned_draw():
    newcomers = {"ann": Rating(), "bob": Rating()}
    # Bob resigned at 4 s; Ann played on to the time limit: Ann places first and wins.
    played_on = rate_race(newcomers, [Placing("ann", 1, "playing", 0), Placing("bob", 2, "resigned", 0)])
    assert round(played_on["ann"].rating) == 1662 and round(played_on["bob"].rating) == 1338
    assert round(played_on["ann"].deviation) == round(played_on["bob"].deviation) == 290
    # Both resigned (Ann at 7 s, Bob at 4 s): Ann places first, but the race is a draw.
    both_quit = rate_race(newcomers, [Placing("ann", 1, "resigned", 0), Placing("bob", 2, "resigned", 0)])
    assert both_quit["ann"].rating == both_quit["bob"].rating == 1500
    assert round(both_quit["ann"].deviation) == round(both_quit["bob"].deviation) == 290


def test_a_pair_left_unrated_plays_no_game_and_a_racer_with_no_rated_pair_keeps_the_rating():
    before = {"a": Rating(1500, 100), "b": Rating(1500, 100), "c": Rating(1500, 100)}
    placings = [
        Placing("a", 1, "finished", 1900),
        Placing("b", 2, "stuck", 200),
        Placing("c", 3, "stuck", 100),
    ]
    unrated = {pair_key("b", "a"), pair_key("c", "b")}
    games = pairwise_results(placings, unrated)
    assert games == {"a": [("c", 1.0)], "b": [], "c": [("a", 0.0)]}
    after = rate_race(before, placings, unrated)
    assert after["b"] == before["b"]
    assert after["a"].rating > 1500 > after["c"].rating


def test_a_race_needs_two_distinct_racers():
    with pytest.raises(ValueError):
        rate_race({"a": Rating()}, [Placing("a", 1, "finished", 1900)])
    with pytest.raises(ValueError):
        rate_race({"a": Rating()}, [Placing("a", 1, "finished", 1900), Placing("a", 2, "stuck", 0)])
