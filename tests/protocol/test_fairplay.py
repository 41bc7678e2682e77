"""The fair-play evidence of a game: a solver's line stands out, an honest bot's does not."""

from __future__ import annotations

import math
import random

from client.bot import choose_move
from client.model import position_key
from protocol.fairplay import GAME_CAP, PLAYER_THRESHOLD, flagged, game_evidence, player_score, timing_score
from protocol.game import Board, hint_scores, move_text
from protocol.solver import Budget, solve

DEAL = 17437166598339580354  # winnable (any time): the solver wins it in 51 moves
VARIANT, RULE = "scorpion", "any-time"


def human_times(count: int, seed: int) -> list[int]:
    """Move times as a person's: lognormal gaps of about 3 s."""
    rng, clock, times = random.Random(seed), 0.0, []
    for _ in range(count):
        clock += 3000 * math.exp(rng.gauss(0, 0.7))
        times.append(int(clock))
    return times


def solver_line() -> list[str]:
    line = solve(Board.new(VARIANT, DEAL, RULE), Budget(nodes=200_000)).moves
    assert line
    return [move_text(move) for move in line]


def bot_game() -> list[str]:
    board, seen, idle, actions = Board.new(VARIANT, DEAL, RULE), set(), 0, []
    while len(actions) < 300 and not board.is_won():
        seen.add(position_key(board))
        move = choose_move(board, seen, idle)
        if move is None:
            break
        idle = 0 if dict(hint_scores(board)).get(move, 0) > 0 else idle + 1
        board.push(move)
        actions.append(move_text(move))
    return actions


def test_a_game_following_the_solver_is_flagged_with_the_moves_that_gave_it_away() -> None:
    actions = solver_line()
    evidence = game_evidence(VARIANT, DEAL, RULE, actions, human_times(len(actions), 1))
    assert evidence["score"] == GAME_CAP >= PLAYER_THRESHOLD
    solver = evidence["solver"]
    assert solver["positions"] >= 5 and solver["hits"] == solver["positions"]
    assert solver["moves"] and all(0 <= i < len(actions) for i in solver["moves"])
    assert evidence["critical"]["hits"] == evidence["critical"]["positions"]
    assert evidence["timing"]["score"] == 0.0  # human-like times: the moves alone tell
    assert flagged([evidence["score"]])


def test_an_honest_bots_game_is_not_flagged() -> None:
    actions = bot_game()
    assert len(actions) >= 10
    evidence = game_evidence(VARIANT, DEAL, RULE, actions, human_times(len(actions), 2))
    assert evidence["score"] < 0
    assert evidence["timing"]["cv"] > 0.3
    assert not flagged([evidence["score"]] * 10)


def test_machine_regular_move_times_are_flagged_on_their_own() -> None:
    actions = bot_game()
    regular = [700 * (i + 1) + (i % 3) * 10 for i in range(len(actions))]
    evidence = game_evidence(VARIANT, DEAL, RULE, actions, regular)
    assert evidence["timing"]["cv"] < 0.05 and evidence["timing"]["median_ms"] < 1000
    assert evidence["score"] >= PLAYER_THRESHOLD


def test_timing_needs_enough_moves_and_scores_regular_play_only() -> None:
    assert timing_score([1000 * i for i in range(1, 6)]) == (0.0, None, None)
    assert timing_score(human_times(40, 3))[0] == 0.0
    score, cv, median = timing_score([500 * i for i in range(1, 41)])
    assert (cv, median) == (0.0, 500) and score > PLAYER_THRESHOLD


def test_a_players_score_sums_the_last_ten_games_each_held_in_bounds() -> None:
    assert player_score([100.0, -100.0]) == GAME_CAP - 2.0
    assert player_score([1.0] * 12) == 10.0  # the newest ten only
    assert flagged([PLAYER_THRESHOLD / 2] * 2) and not flagged([PLAYER_THRESHOLD / 2, 1.0])
