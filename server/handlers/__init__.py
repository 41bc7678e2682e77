"""Every client message's handler, one module per feature, in one table.

Each handler is ``async def on_x(node, session, message) -> None`` in the module of its
feature. :data:`HANDLERS` says which serves which message type; a new message type gets
its handler in its feature's module and its row here (``tests/test_layers.py`` fails
while a client message type has none).
"""

from __future__ import annotations

from protocol.wire import message as m

from ..node import Handler
from . import accounts, challenges, daily, matchmaking, players, race, ratings, rooms, solo, solver, spectate

__all__ = ["HANDLERS"]

HANDLERS: dict[type[m.Message], Handler] = {
    # players.py: who the player is
    m.Hello: players.on_hello,
    m.Ping: players.on_ping,
    m.Stats: players.on_stats,
    m.ForgetMe: players.on_forget_me,
    # accounts.py: accounts and their sessions
    m.Login: accounts.on_login,
    m.Register: accounts.on_register,
    m.Logout: accounts.on_logout,
    m.PasswordChange: accounts.on_password_change,
    m.Sessions: accounts.on_sessions,
    m.SessionRevoke: accounts.on_session_revoke,
    m.PasskeyOptions: accounts.on_passkey_options,
    m.PasskeyRegister: accounts.on_passkey_register,
    m.PasskeyLogin: accounts.on_passkey_login,
    # rooms.py: racing a friend, and racing the same players again
    m.RoomCreate: rooms.on_room_create,
    m.RoomJoin: rooms.on_room_join,
    m.Ready: rooms.on_ready,
    m.RoomLeave: rooms.on_room_leave,
    m.RoomStart: rooms.on_room_start,
    m.Rematch: rooms.on_rematch,
    # matchmaking.py: the quick match queue
    m.QueueJoin: matchmaking.on_queue_join,
    m.QueueCancel: matchmaking.on_queue_cancel,
    # race.py: a racer's actions in their game
    m.PlayMove: race.on_move,
    m.DealReserve: race.on_deal,
    m.Undo: race.on_undo,
    m.HintRequest: race.on_hint,
    m.Resign: race.on_resign,
    m.Resume: race.on_resume,
    # solo.py: solo play and saved games
    m.SoloNew: solo.on_solo_new,
    m.SoloReplay: solo.on_solo_replay,
    m.SoloResume: solo.on_solo_resume,
    m.SoloLeave: solo.on_solo_leave,
    m.SavedGames: solo.on_saved_games,
    m.SavedDelete: solo.on_saved_delete,
    # daily.py: the daily tournament and its leaderboards
    m.DailyInfo: daily.on_daily_info,
    m.DailyStart: daily.on_daily_start,
    m.Leaderboard: daily.on_leaderboard,
    m.AroundMe: daily.on_around_me,
    # solver.py: the solver's help
    m.Analyze: solver.on_analyze,
    m.Winnable: solver.on_winnable,
    m.Finish: solver.on_finish,
    # spectate.py: the live games list, watching, replays
    m.GamesList: spectate.on_games_list,
    m.Watch: spectate.on_watch,
    m.Unwatch: spectate.on_unwatch,
    m.Replay: spectate.on_replay,
    m.ReplayPositions: spectate.on_replay_positions,
    # ratings.py: profiles and rating boards
    m.ProfileRequest: ratings.on_profile,
    m.RatingBoard: ratings.on_rating_board,
    # challenges.py: racing a friend's recorded run, and the daily's ghosts
    m.ChallengeCreate: challenges.on_challenge_create,
    m.ChallengeNew: challenges.on_challenge_new,
    m.ChallengeTake: challenges.on_challenge_take,
    m.ChallengeBoard: challenges.on_challenge_board,
    m.ChallengeList: challenges.on_challenge_list,
    m.DailyGhost: challenges.on_daily_ghost,
}
"""Message type -> the handler that serves it."""
