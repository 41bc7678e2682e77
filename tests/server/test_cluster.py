"""Redis Cluster readiness: every multi-key operation stays within one slot.

The scripts are read as text (a script may reach only keys it is given in ``KEYS``: one it
names itself may live on another cluster node), and a selection of the suite's tests is run
again here against a one-node cluster (``cluster_server``), which refuses any script whose
keys span several slots and any transaction over several slots.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from server.store import scripts
from tests.conftest import ClusterServer
from tests.server.conftest import accounts_only

# The tests below are the suite's own, collected again in this module so that they run
# against the cluster: this module's ``redis_url`` fixture replaces the plain server's.
from tests.server.test_daily import (  # noqa: F401
    test_forget_me_removes_saved_games_statistics_leaderboard_entries_and_identity,
    test_leaderboard_ranks_by_score_then_ending_then_time_or_stay_then_earlier_finish,
    test_one_ranked_attempt_a_second_is_refused_then_practice_is_allowed,
    test_statistics_count_games_wins_scores_and_streaks_per_variant,
)
from tests.server.test_matchmaking import (  # noqa: F401
    test_a_match_whose_player_left_meanwhile_is_not_taken,
    test_leaving_and_coming_back_resumes_the_wait_instead_of_narrowing_the_window,
    test_real_nodes_match_players_of_close_ratings_first_and_anyone_after_the_maximum_wait,
    two_nodes,
)
from tests.server.test_passkeys import (  # noqa: F401
    test_a_guest_makes_an_account_with_a_passkey_and_logs_in_with_it_elsewhere,
    test_an_account_adds_a_passkey_and_forget_me_removes_it,
)
from tests.server.test_race import (  # noqa: F401
    test_a_resign_by_both_ends_the_race_and_reveals_the_deal,
    test_bad_requests_get_their_error_codes,
    test_the_same_move_from_two_tabs_on_two_nodes_is_applied_once,
    test_two_scripted_clients_race_to_a_finish_on_a_known_deal,
)
from tests.server.test_ranked import (  # noqa: F401
    test_a_profile_shows_ratings_statistics_and_the_rated_game_with_its_change,
    test_forget_me_removes_ratings_and_the_profile,
)
from tests.server.test_resilience import (  # noqa: F401
    test_a_dropped_racer_resumes_with_exactly_the_missed_events,
    test_cancelling_leaves_the_queue,
    test_quick_match_pairs_two_waiting_players_into_a_race,
    test_racers_of_a_killed_node_who_never_return_are_marked_as_left,
)
from tests.server.test_solo import test_a_saved_solo_game_resumes_on_another_device_with_the_token  # noqa: F401
from tests.server.test_spectate import (  # noqa: F401
    test_a_finished_race_replays_move_by_move_from_its_log,
    test_the_live_list_pushes_games_as_they_start_and_end,
)
from tests.server.test_store import (  # noqa: F401
    test_a_game_ends_exactly_once_and_refuses_later_moves,
    test_an_undo_is_kept_as_an_action_and_events_are_versioned,
    test_presence_is_counted_per_process_and_a_dead_ones_share_can_be_dropped,
    test_rooms_fill_up_and_refuse_unknown_codes,
    test_the_queue_pairs_the_two_longest_waiting,
)


@pytest.fixture
def open_client(open_client: Any) -> Any:
    """Every client of this module is an account: the ranked tests it borrows need one (the
    others play the same with an account)."""
    return accounts_only(open_client)


@pytest.fixture
def redis_url(cluster_server: ClusterServer) -> str:
    """This module's tests run against the one-node cluster."""
    cluster_server.flush()
    return cluster_server.url.replace("redis://", "redis+cluster://").removesuffix("/0")


SCRIPTS = {
    name: value for name, value in vars(scripts).items() if name.isupper() and "redis.call" in str(value)
}
CALL = re.compile(r"redis\.call\('(\w+)'(?:,\s*([^,)]+))?")
NO_KEYS = {"PUBLISH", "SPUBLISH"}  # take a channel, not a key


def test_scripts_reach_only_the_keys_they_are_given() -> None:
    assert {"ACT", "SET_STATUS", "END", "JOIN_ROOM", "LEADERBOARD_SUBMIT"} <= set(SCRIPTS)
    for name, source in SCRIPTS.items():
        aliases = set(re.findall(r"local (\w+) = KEYS\[\d+\]", source))
        for command, first in CALL.findall(source):
            if command in NO_KEYS:
                continue
            first = first.strip()
            assert re.fullmatch(r"KEYS\[\w+\]", first) or first in aliases, (
                f"{name}: {command} {first} names a key the script was not given"
            )


def test_the_cluster_refuses_a_script_over_two_slots(cluster_server: ClusterServer) -> None:
    # The guard the rest of this module relies on.
    import redis

    client = redis.Redis.from_url(cluster_server.url)
    try:
        with pytest.raises(redis.ResponseError, match="same slot"):
            client.eval("return redis.call('SET', KEYS[2], redis.call('GET', KEYS[1]) or 1)", 2, "a", "b")
        assert client.eval("return redis.call('SET', KEYS[2], 1)", 2, "{t}a", "{t}b") == b"OK"
    finally:
        client.close()
