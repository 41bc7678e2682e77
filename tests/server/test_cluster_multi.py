"""The suite's race, resume, spectate, daily, leaderboard, forget-me and rematch tests again,
on a real Redis Cluster of three primaries with a replica each, with two server nodes.

A game's keys share one slot, so each game lives on one primary, and the games of one
test spread over the three: every cross-slot step (a player's index next to a game, the
live list, the leaderboards) goes through the cluster client's routing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.conftest import accounts_only
from tests.server.test_challenges import (  # noqa: F401
    test_a_game_started_again_as_its_start_is_sent_keeps_one_start_everywhere,
)
from tests.server.test_daily import (  # noqa: F401
    test_forget_me_removes_saved_games_statistics_leaderboard_entries_and_identity,
    test_leaderboard_ranks_by_score_then_ending_then_time_or_stay_then_earlier_finish,
    test_one_ranked_attempt_a_second_is_refused_then_practice_is_allowed,
)
from tests.server.test_race import (  # noqa: F401
    test_a_resign_by_both_ends_the_race_and_reveals_the_deal,
    test_racers_ask_for_a_rematch_and_race_again_in_a_new_room,
    test_the_end_of_a_race_on_a_deal_number_past_64_bits_reaches_the_other_node_exactly,
    test_the_same_move_from_two_tabs_on_two_nodes_is_applied_once,
    test_two_racers_on_two_nodes_see_each_others_progress,
    test_two_scripted_clients_race_to_a_finish_on_a_known_deal,
)
from tests.server.test_ranked import (  # noqa: F401
    test_a_rated_race_moves_the_winner_up_and_the_one_who_resigned_down_and_tells_both,
    test_forget_me_removes_ratings_and_the_profile,
)
from tests.server.test_resilience import (  # noqa: F401
    test_a_dropped_racer_resumes_with_exactly_the_missed_events,
    test_a_killed_node_loses_no_accepted_move_and_its_racers_finish_elsewhere,
    test_quick_match_pairs_two_waiting_players_into_a_race,
)
from tests.server.test_spectate import (  # noqa: F401
    test_a_finished_race_replays_move_by_move_from_its_log,
    test_the_live_list_pushes_games_as_they_start_and_end,
)
from tests.valkey_cluster import ValkeyCluster


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this module is an account: the ranked tests it borrows need one (the
    others play the same with an account)."""
    return accounts_only(open_client)


@pytest.fixture(scope="module")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyCluster]:
    """Three primaries and three replicas, started once for this module."""
    cluster = ValkeyCluster(tmp_path_factory.mktemp("cluster"), primaries=3, replicas_per_primary=1)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def redis_url(real_cluster: ValkeyCluster) -> str:
    """This module's tests run against the real cluster."""
    real_cluster.flush()
    return real_cluster.url


def test_the_games_of_this_module_spread_over_every_primary(real_cluster: ValkeyCluster) -> None:
    from redis.crc import key_slot

    owners = {real_cluster.primary_of(key_slot(f"{{g:{n:04d}}}:meta".encode())) for n in range(60)}
    assert len(owners) == 3
