"""Glicko-2 against the worked example of Glickman's paper, and its invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.rating import DEFAULT_DEVIATION, Rating, Result, age, rate

# The paper's example: a 1500 (RD 200, sigma 0.06) player beats a 1400 (RD 30), loses to a
# 1550 (RD 100) and to a 1700 (RD 300), with tau 0.5.
EXAMPLE = [
    Result(Rating(1400, 30), 1.0),
    Result(Rating(1550, 100), 0.0),
    Result(Rating(1700, 300), 0.0),
]


def test_the_papers_worked_example_gives_its_published_rating_deviation_and_volatility():
    after = rate(Rating(1500, 200, 0.06), EXAMPLE, tau=0.5)
    # The paper: mu' = -0.2069, phi' = 0.8722, sigma' = 0.05999, i.e. r' = 1464.06, RD' = 151.52.
    assert (after.rating - 1500) / 173.7178 == pytest.approx(-0.2069, abs=5e-5)
    assert after.deviation / 173.7178 == pytest.approx(0.8722, abs=5e-5)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.deviation == pytest.approx(151.52, abs=0.01)


def test_a_period_without_games_only_widens_the_deviation_by_the_volatility():
    before = Rating(1500, 200, 0.06)
    after = rate(before, [])
    assert after.rating == before.rating and after.volatility == before.volatility
    assert after.deviation == pytest.approx(math.hypot(200 / 173.7178, 0.06) * 173.7178)


def test_ageing_grows_with_the_periods_sat_out_and_stops_at_a_newcomers_deviation():
    before = Rating(1700, 60, 0.06)
    assert age(before, 0) == before
    assert 60 < age(before, 1).deviation < age(before, 30).deviation < age(before, 365).deviation
    assert age(before, 10**6).deviation == DEFAULT_DEVIATION
    assert age(before, 2.5).deviation == pytest.approx(
        math.sqrt((60 / 173.7178) ** 2 + 2.5 * 0.06**2) * 173.7178
    )


def test_beating_a_stronger_player_gains_more_than_beating_a_weaker_one():
    me = Rating(1500, 80)
    strong = rate(me, [Result(Rating(1800, 80), 1.0)])
    weak = rate(me, [Result(Rating(1200, 80), 1.0)])
    assert strong.rating - me.rating > weak.rating - me.rating > 0


def test_a_draw_between_equals_changes_no_rating():
    after = rate(Rating(1600, 120), [Result(Rating(1600, 120), 0.5)])
    assert after.rating == pytest.approx(1600)
    assert after.deviation < 120


def test_a_newcomer_is_provisional_until_the_deviation_falls_to_110():
    assert Rating().is_provisional
    assert Rating(1500, 111).is_provisional
    assert not Rating(1500, 110).is_provisional


@pytest.mark.parametrize(
    ("rating", "deviation", "volatility"),
    [(math.nan, 100, 0.06), (1500, 0, 0.06), (1500, 351, 0.06), (1500, 100, 0), (1500, 100, 1.5)],
)
def test_a_rating_out_of_range_is_refused(rating, deviation, volatility):
    with pytest.raises(ValueError):
        Rating(rating, deviation, volatility)


ratings = st.builds(
    Rating,
    st.floats(500, 2500),
    st.floats(30, DEFAULT_DEVIATION),
    st.floats(0.03, 0.1),
)


@given(ratings, st.lists(st.tuples(ratings, st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=7))
def test_every_update_is_a_valid_rating_that_moves_the_way_the_results_say(me, games):
    results = [Result(opponent, score) for opponent, score in games]
    after = rate(me, results)
    assert 0 < after.deviation <= DEFAULT_DEVIATION and 0 < after.volatility < 1
    if all(r.score == 1.0 for r in results):
        assert after.rating > me.rating
    if all(r.score == 0.0 for r in results):
        assert after.rating < me.rating
