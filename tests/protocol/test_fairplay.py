"""The fair-play evidence of a game: a solver's line stands out, an honest bot's does not."""

from __future__ import annotations

import math
import random

from client.bot import choose_move
from client.model import position_key
from protocol.fairplay import (
    GAME_CAP,
    LEAVE_PRIOR,
    PLAYER_THRESHOLD,
    flagged,
    game_evidence,
    player_score,
    timing_score,
)
from protocol.game import Board, Move, hint_scores, move_text
from protocol.solver import Budget, Verdict, solve

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


def bot_game(follow: int = 0, slip: float = 0.0, seed: int = 0) -> list[str]:
    """The bot's game; with ``follow``, the solver's move in every ``follow``-th position where
    it differs from the hint's choice; with ``slip``, another useful move on that share."""
    board, seen, idle, actions = Board.new(VARIANT, DEAL, RULE), set(), 0, []
    rng, telling = random.Random(seed), 0
    while len(actions) < 300 and not board.is_won():
        seen.add(position_key(board))
        move = choose_move(board, seen, idle)
        if move is None:
            break
        ranked = hint_scores(board)
        if slip and rng.random() < slip:
            others = [m for m, value in ranked if value >= 0 and not m.is_deal and m != move]
            move = rng.choice(others) if others else move
        if follow:
            solution = solve(board, Budget(nodes=200_000))
            choice: Move | None = solution.moves[0] if solution.verdict is Verdict.WINNABLE else None
            if choice is not None and choice != ranked[0][0]:
                telling += 1
                move = choice if telling % follow == 1 else move
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


def test_solver_moves_weigh_by_how_often_the_racer_leaves_the_hint_where_the_solver_agrees() -> None:
    # One telling position in two played the solver's way, the hint's choice everywhere else:
    # leaving the hint exactly where the solver differs is what gives it away.
    actions = bot_game(follow=2)
    part = game_evidence(VARIANT, DEAL, RULE, actions, human_times(len(actions), 4))
    assert part["solver"]["hits"] >= 1 and part["solver"]["leaves_hint"] < LEAVE_PRIOR / 2
    assert part["solver"]["score"] > 2.0 and part["timing"]["score"] == 0.0
    # A weaker honest player leaves the hint often, everywhere: their chance hits count for less.
    weak = [bot_game(slip=0.3, seed=seed) for seed in range(5)]
    evidences = [game_evidence(VARIANT, DEAL, RULE, a, human_times(len(a), 5)) for a in weak]
    assert sum(e["solver"]["leaves_hint"] for e in evidences) / len(evidences) > LEAVE_PRIOR
    assert sum(e["solver"]["score"] for e in evidences) < 0
    assert not flagged([e["score"] for e in evidences])


def test_a_daily_attempt_replaying_another_players_earlier_game_is_flagged() -> None:
    # The day's earlier games: weaker players who leave the hint's choice now and then.
    earlier = [bot_game(slip=0.3, seed=seed) for seed in range(10, 16)]
    # A scout played the deal on a second account (seed 14: it left the hint ten times), then
    # replays that line in its ranked attempt.
    scouted = earlier[4]
    evidence = game_evidence(VARIANT, DEAL, RULE, scouted, human_times(len(scouted), 7), earlier=earlier)
    prior = evidence["prior"]
    assert prior["games"] == len(earlier) and prior["match"] == 4
    assert prior["hits"] == prior["positions"] >= 8
    assert prior["moves"] and all(0 <= i < len(scouted) for i in prior["moves"])
    assert prior["score"] >= PLAYER_THRESHOLD and evidence["timing"]["score"] == 0.0
    assert evidence["solver"]["score"] < 1.0  # an honest line: the solver measure cannot tell
    assert flagged([evidence["score"]])
    # The same line with nobody's earlier game to follow says nothing.
    others = earlier[:4] + earlier[5:]
    alone = game_evidence(VARIANT, DEAL, RULE, scouted, human_times(len(scouted), 7), earlier=others)
    assert alone["prior"]["score"] < 1.0 and not flagged([alone["score"]])


def test_honest_players_of_the_same_deal_do_not_match_each_other_by_chance() -> None:
    earlier = [bot_game(slip=0.3, seed=seed) for seed in range(10, 16)]
    evidences = []
    for seed in range(20, 30):
        actions = bot_game(slip=0.3, seed=seed)
        evidences.append(
            game_evidence(VARIANT, DEAL, RULE, actions, human_times(len(actions), 8), earlier=earlier)
        )
    assert all(e["prior"]["compared"] >= 1 for e in evidences)
    assert max(e["prior"]["score"] for e in evidences) < 1.0
    assert not flagged([e["score"] for e in evidences])


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
