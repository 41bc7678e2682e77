"""A race's standings rated as pairwise games: 2 and 8 racers, ties, abandons, farmed pairs."""

from __future__ import annotations

import pytest

from protocol.rating import Placing, Rating, Result, pair_key, pairwise_results, rate, rate_race


def test_a_two_racer_race_is_one_game_each_way():
    before = {"ann": Rating(1500, 200), "bob": Rating(1600, 150)}
    after = rate_race(before, [Placing("ann", 1, "finished"), Placing("bob", 2, "stuck")])
    assert after["ann"] == rate(before["ann"], [Result(before["bob"], 1.0)])
    assert after["bob"] == rate(before["bob"], [Result(before["ann"], 0.0)])
    assert after["ann"].rating > 1500 and after["bob"].rating < 1600


def test_an_eight_racer_race_rates_each_racer_against_the_seven_others_from_their_ratings_before():
    names = [f"r{i}" for i in range(8)]
    before = {name: Rating(1400 + 30 * i, 60 + 20 * i) for i, name in enumerate(names)}
    placings = [Placing(name, rank, "finished") for rank, name in enumerate(reversed(names), start=1)]
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


def test_racers_of_the_same_place_draw():
    games = pairwise_results([Placing("a", 1, "stuck"), Placing("b", 1, "stuck"), Placing("c", 3, "stuck")])
    assert games["a"] == [("b", 0.5), ("c", 1.0)]
    assert games["c"] == [("a", 0.0), ("b", 0.0)]


def test_abandoning_loses_to_everyone_who_stayed_whatever_the_scores():
    placings = [Placing("quitter", 1, "resigned"), Placing("slow", 2, "stuck"), Placing("gone", 3, "left")]
    games = dict(pairwise_results(placings))
    assert games["quitter"] == [("slow", 0.0), ("gone", 1.0)]
    assert games["slow"] == [("quitter", 1.0), ("gone", 1.0)]
    assert games["gone"] == [("quitter", 0.0), ("slow", 0.0)]


def test_a_pair_left_unrated_plays_no_game_and_a_racer_with_no_rated_pair_keeps_the_rating():
    before = {"a": Rating(1500, 100), "b": Rating(1500, 100), "c": Rating(1500, 100)}
    placings = [Placing("a", 1, "finished"), Placing("b", 2, "stuck"), Placing("c", 3, "stuck")]
    unrated = {pair_key("b", "a"), pair_key("c", "b")}
    games = pairwise_results(placings, unrated)
    assert games == {"a": [("c", 1.0)], "b": [], "c": [("a", 0.0)]}
    after = rate_race(before, placings, unrated)
    assert after["b"] == before["b"]
    assert after["a"].rating > 1500 > after["c"].rating


def test_a_race_needs_two_distinct_racers():
    with pytest.raises(ValueError):
        rate_race({"a": Rating()}, [Placing("a", 1, "finished")])
    with pytest.raises(ValueError):
        rate_race({"a": Rating()}, [Placing("a", 1, "finished"), Placing("a", 2, "stuck")])
