"""The messages a player sends outside a race, and their answers.

The daily tournament and its leaderboards, solo games, statistics, the account, ratings
and profiles, and the solver's post-game analysis and practice hints. Public through
:mod:`protocol.wire.message`, which registers every message.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from ..game.variant import VARIANTS
from .base import Record, Reply, Request
from .fields import (
    MAX_LIST,
    MAX_PLAYERS,
    MAX_RACERS,
    MAX_VERSION,
    Count,
    Date,
    Deviation,
    Epoch,
    GameMode,
    Hex64,
    Id,
    Name,
    RacerStatus,
    Rating,
    ReserveRuleName,
    Variant,
    Verdict,
    Version,
    _kept,
    check_date,
)

# ---------------------------------------------------------------- daily tournament, account


class DailyInfo(Request, tag="daily_info", frozen=True, kw_only=True):
    """Ask about today's daily deal of a variant (and yesterday's revealed one)."""

    variant: Variant = _kept("scorpion")


class Daily(Reply, tag="daily", frozen=True, kw_only=True):
    """Answer daily_info: the date, commitment, closing time, the player's attempt, yesterday's reveal."""

    date: Date
    variant: Variant
    commitment: Hex64
    ends: Epoch
    played: bool
    finished: bool = _kept(False)
    previous: dict[str, Any] | None = None
    """Yesterday's deal revealed: {"date", "number" (text), "salt", "commitment"}."""


class DailyStart(Request, tag="daily_start", frozen=True, kw_only=True):
    """Start today's daily deal: the one ranked attempt, or unranked practice once it is over."""

    variant: Variant = _kept("scorpion")
    practice: bool = _kept(False)


class LeaderboardEntry(Record, frozen=True, kw_only=True):
    """One line of a daily leaderboard: ``status`` tells how the attempt ended (absent on
    entries stored before it was recorded)."""

    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)]
    player: Id
    name: Name
    score: Annotated[int, Meta(ge=0, le=10**6)]
    elapsed: Count
    finished: Epoch
    status: RacerStatus | None = None


class Leaderboard(Request, tag="leaderboard", frozen=True, kw_only=True):
    """Ask for a page of a day's leaderboard (today by default); ``subscribe`` pushes updates."""

    variant: Variant = _kept("scorpion")
    date: Date | None = None
    offset: Annotated[int, Meta(ge=0, le=MAX_VERSION)] = _kept(0)
    limit: Annotated[int, Meta(ge=1, le=100)] = _kept(20)
    subscribe: bool = _kept(False)

    def __post_init__(self) -> None:
        check_date(self.date, "date")


class AroundMe(Request, tag="around_me", frozen=True, kw_only=True):
    """Ask for the player's own rank with ``radius`` neighbours above and below."""

    variant: Variant = _kept("scorpion")
    date: Date | None = None
    radius: Annotated[int, Meta(ge=0, le=50)] = _kept(5)

    def __post_init__(self) -> None:
        check_date(self.date, "date")


class LeaderboardPage(Reply, tag="leaderboard_page", frozen=True, kw_only=True):
    """Answer leaderboard/around_me (or push an update): entries from rank ``offset + 1``."""

    variant: Variant
    date: Date
    offset: Count
    total: Count
    entries: Annotated[tuple[LeaderboardEntry, ...], Meta(max_length=101)]
    me: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None
    """The asking player's rank, when they are on this day's board."""


class SoloNew(Request, tag="solo_new", frozen=True, kw_only=True):
    """Start a solo game on a fresh secret deal (New Game); ``save`` keeps it resumable."""

    variant: Variant = _kept("scorpion")
    reserve_rule: ReserveRuleName = _kept("any-time")
    save: bool = _kept(True)
    winnable: bool = False
    """Deal only a deal the solver proves winnable (most deals cannot be won)."""


class SoloReplay(Request, tag="solo_replay", frozen=True, kw_only=True):
    """Start the same deal as one of the player's solo games again (Replay)."""

    game: Id


class SoloResume(Request, tag="solo_resume", frozen=True, kw_only=True):
    """Continue a saved solo game, from any device (answered with snapshot)."""

    game: Id


class SoloLeave(Request, tag="solo_leave", frozen=True, kw_only=True):
    """Leave a saved solo game for now: it stays saved and its clock stops (answered with ok)."""

    game: Id


class SavedDelete(Request, tag="saved_delete", frozen=True, kw_only=True):
    """Delete one of the player's saved solo games (answered with ok); it is not counted."""

    game: Id


class SavedGames(Request, tag="saved_games", frozen=True, kw_only=True):
    """List the player's saved solo games in progress."""


class SavedGame(Record, frozen=True, kw_only=True):
    """One saved solo game."""

    game: Id
    variant: Variant
    start: Epoch
    summary: dict[str, Any]


class SavedGamesList(Reply, tag="saved_games_list", frozen=True, kw_only=True):
    """Answer saved_games: the saved solo games, newest first."""

    games: Annotated[tuple[SavedGame, ...], Meta(max_length=MAX_LIST)]


class Stats(Request, tag="stats", frozen=True, kw_only=True):
    """Ask for the player's statistics (every variant, or one)."""

    variant: Variant | None = None


class VariantStats(Record, frozen=True, kw_only=True):
    """A player's record in one variant (kept separately per variant)."""

    variant: Variant
    started: Count
    won: Count
    best_score: Count
    best_time: Count | None = None
    average_score: Count
    streak: Count
    longest_streak: Count
    dailies: Count


class StatsInfo(Reply, tag="stats_info", frozen=True, kw_only=True):
    """Answer stats."""

    stats: Annotated[tuple[VariantStats, ...], Meta(max_length=len(VARIANTS))]


class ForgetMe(Request, tag="forget_me", frozen=True, kw_only=True):
    """Erase the player's identity and records (answered with forgotten, then the server closes)."""


class Forgotten(Reply, tag="forgotten", frozen=True, kw_only=True):
    """Answer forget_me with what was removed; the old token no longer works."""

    removed: dict[str, Any]


# ---------------------------------------------------------------- ratings and profiles


class RatingInfo(Record, frozen=True, kw_only=True):
    """A player's Glicko-2 rating in one variant (rounded), and their place on its board."""

    variant: Variant
    rating: Rating
    deviation: Deviation
    games: Count
    """Rated races played in the variant."""
    provisional: bool
    """The deviation is above 110: too few recent rated races to trust the rating yet."""
    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None
    best: Rating | None = None
    """The highest rating reached in the variant."""


class RatingDelta(Record, frozen=True, kw_only=True):
    """One racer's rating before and after a rated race (the change is ``after - before``)."""

    player: Id
    name: Name
    before: Rating
    after: Rating
    deviation: Deviation
    provisional: bool


class RatingChange(Reply, tag="rating_change", frozen=True, kw_only=True):
    """Tell a racer how a rated race they finished changed every racer's rating."""

    game: Id
    variant: Variant
    changes: Annotated[tuple[RatingDelta, ...], Meta(max_length=MAX_PLAYERS)]


class ProfileRequest(Request, tag="profile", frozen=True, kw_only=True):
    """Ask for a player's profile (the asking player's own when ``player`` is absent)."""

    player: Id | None = None


class RecentGame(Record, frozen=True, kw_only=True):
    """One finished game on a profile: what it was, how the player placed, whether it replays."""

    game: Id
    variant: Variant
    mode: GameMode
    start: Epoch
    racers: Annotated[int, Meta(ge=1, le=MAX_RACERS)]
    rank: Annotated[int, Meta(ge=1, le=MAX_RACERS)]
    score: Annotated[int, Meta(ge=0, le=10**6)]
    status: RacerStatus
    rated: bool = _kept(False)
    change: Annotated[int, Meta(ge=-10_000, le=10_000)] | None = None
    """The rating change the game made, for a rated race."""
    replayable: bool = _kept(True)
    """Whether ``replay`` serves it now (a daily game's day must be over first)."""


class Profile(Reply, tag="profile_info", frozen=True, kw_only=True):
    """Answer profile: name, ratings and statistics per variant, and the newest finished games."""

    player: Id
    name: Name
    ratings: Annotated[tuple[RatingInfo, ...], Meta(max_length=len(VARIANTS))]
    stats: Annotated[tuple[VariantStats, ...], Meta(max_length=len(VARIANTS))]
    recent: Annotated[tuple[RecentGame, ...], Meta(max_length=50)]
    me: bool = _kept(False)
    """Whether the profile is the asking player's own."""


class RatingBoard(Request, tag="rating_board", frozen=True, kw_only=True):
    """Ask for a page of a variant's rating leaderboard, or the player's own place with neighbours."""

    variant: Variant = _kept("scorpion")
    offset: Annotated[int, Meta(ge=0, le=MAX_VERSION)] = _kept(0)
    limit: Annotated[int, Meta(ge=1, le=100)] = _kept(20)
    around_me: bool = _kept(False)
    """When true, the page is centred on the player (``limit`` is then the page's size)."""


class RatingEntry(Record, frozen=True, kw_only=True):
    """One line of a rating leaderboard."""

    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)]
    player: Id
    name: Name
    rating: Rating
    deviation: Deviation
    games: Count
    provisional: bool


class RatingPage(Reply, tag="rating_page", frozen=True, kw_only=True):
    """Answer rating_board: entries from rank ``offset + 1``, and the player's own rank if rated."""

    variant: Variant
    offset: Count
    total: Count
    entries: Annotated[tuple[RatingEntry, ...], Meta(max_length=100)]
    me: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None


# ---------------------------------------------------------------- solver: analysis and practice hints


class Analyze(Request, tag="analyze", frozen=True, kw_only=True):
    """Ask for the post-game analysis of one of the player's finished games."""

    game: Id


class Analysis(Reply, tag="analysis", frozen=True, kw_only=True):
    """Tell a player whether the deal was winnable, a winning line, and where their win slipped away."""

    game: Id
    player: Id
    verdict: Verdict
    line: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)] = _kept(())
    """A winning line from the deal's opening (empty unless the verdict is winnable)."""
    moves: Count = _kept(0)
    """How many moves of the player's game were analysed (their final line, undos applied)."""
    slipped: Count | None = None
    """Index (from 0) of the player's move after which the game could no longer be won."""
    won: bool = _kept(False)


class Winnable(Request, tag="winnable", frozen=True, kw_only=True):
    """Ask, in a solo game only, whether the position is still winnable and for a winning move."""

    game: Id
    v: Version


class Finish(Request, tag="finish", frozen=True, kw_only=True):
    """Ask the server to play the rest of a winning line once every card is known (auto-finish)."""

    game: Id
    v: Version


class FinishInfo(Reply, tag="finish_info", frozen=True, kw_only=True):
    """Answer finish: the verdict on the position and how many moves were played (each an accepted)."""

    game: Id
    v: Version
    verdict: Verdict
    moves: Count = _kept(0)


class WinnableInfo(Reply, tag="winnable_info", frozen=True, kw_only=True):
    """Answer winnable: the verdict on the current position and, if winnable, a winning move."""

    game: Id
    v: Version
    verdict: Verdict
    move: dict[str, Any] | None = None
    deal: Verdict | None = None
    """With an ``unwinnable`` verdict: the verdict on the deal from its opening
    (``unwinnable``: it never could be won; ``winnable``: a move lost it)."""
