"""The one package that talks to Redis. Everything above it speaks in game terms.

Keys (every key of one game shares the hash tag ``{g:ID}``, so each per-game script
touches one Redis Cluster slot; so do the keys of one room and of one leaderboard; no
script reaches a key it is not given, and no transaction spans two slots):

==============================  ======  ==============================================
key                             type    what it holds
==============================  ======  ==============================================
``player:ID``                   hash    name, created, current room and game; a field
                                        ``in:CODE`` for each room the player hosts or
                                        sits in (whichever connection entered it); an
                                        account's username, skeleton, password (argon2id)
``token:SHA256``                hash    a session token (only its hash is the key): player,
                                        session id ``sid``, when it was handed out ``born``
``sessions:PLAYER``             hash    session id -> JSON: its token's key, created,
                                        last seen, device
``username:SHA256``             string  player id of the account whose username has this
                                        look-alike skeleton (its hash); ``-`` while a
                                        forgotten account's username is held back
``login:PLAYER``                hash    wrong passwords in a row, lockout's end (ms)
``room:{CODE}``                 hash    host, variant, options, state, game, version
``room:{CODE}:members``         list    player ids in join order
``room:{CODE}:ready``           set     player ids that are ready
``queue:VARIANT``               zset    waiting player ids by enqueue time (ms)
``{g:ID}:meta``                 hash    variant, rule, number, salt, commitment, start,
                                        state, options, roster, event version ``ver``
``{g:ID}:p:PLAYER``             hash    racer status, summary, ``changed`` (the event
                                        version of the racer's last board change)
``{g:ID}:m:PLAYER``             list    the racer's actions in order: moves (``7H:2-5``,
                                        ``deal``) and ``undo`` markers; replaying them
                                        rebuilds the racer's board
``{g:ID}:log``                  list    the game's events; entry i has version i + 1
``{g:ID}:a:PLAYER``             string  the racer's post-game analysis (JSON)
``{g:ID}:nodes``                set     the nodes subscribed to the game's channel (a
                                        move no other node follows is not published)
``live``                        zset    running game ids by start time (ms)
``stats:PLAYER:VARIANT``        hash    started, won, best score/time, totals, streaks
``saved:PLAYER``                zset    saved solo games in progress, by start time
``results:PLAYER``              list    ids of the player's finished games (newest first)
``daily:secret``                string  the secret the daily deal numbers derive from
``daily:DATE:VARIANT``          hash    the day's number, salt and commitment
``daily:DATE:VARIANT:attempts`` hash    player -> game id of their ranked attempt
``daily:DATE:VARIANT:done``     set     players whose ranked attempt is over
``lb:{DATE:VARIANT}``           zset    the day's leaderboard (composite sort key)
``lb:{DATE:VARIANT}:e``         hash    player -> entry (name, score, elapsed, finished)
``boards:PLAYER``               set     leaderboards the player is on (for forget-me)
``online:PLAYER``               hash    node -> open connections of the player there
``nodes``                       zset    node names by their last heartbeat (ms)
``rating:{PLAYER}``             hash    variant -> rating record (JSON: rating, deviation,
                                        volatility, rated races, last one's end, best)
``rating:{PLAYER}:games``       zset    rated games applied to the ratings, by end (ms)
``rating:{PLAYER}:delta``       hash    game -> that race's rating change (JSON); the
                                        newest 200 are kept, like ``:games``
``fp:{PLAYER}:games``           list    the player's last 10 analysed ranked games (JSON:
                                        game, mode, score, evidence), kept 90 days
``fp:{PLAYER}:races``           hash    rated game -> its end and the player's opponents
                                        (for refunds if the player is banned), 31 days
``fp:{PLAYER}:ban``             string  the player's ban (JSON: reason, by, at)
``fp:{PLAYER}:refunds``         hash    game -> points given back to the player after
                                        an opponent's ban (each game once)
``fp:review``                   zset    the fair-play review queue: player -> score
``fp:log``                      list    moderation actions (JSON: who, when, why, what)
``rb:{VARIANT}``                zset    the variant's rating board: player -> rating
``pair:DATE:A:B``               string  rated races between players A and B that day
``mm:{VARIANT}:q``              zset    the rated queue: player -> when the wait began
``mm:{VARIANT}:r``              hash    player -> rating they are matched on
``mm:{VARIANT}:left``           zset    players who left the queue, by when (ms)
``mm:{VARIANT}:first``          hash    player -> when their wait began (kept 60 s)
``mm:{VARIANT}:lead``           string  the node forming the variant's matches (a lease)
``ch:{CODE}``                   hash    a challenge: variant, rule, number, options,
                                        owner, source game, created, expires
``ch:{CODE}:ghosts``            list    its recorded runs (JSON: name, result, timed
                                        actions); all three keys expire with it
``ch:{CODE}:board``             hash    taker -> their best result (JSON)
``chs:{PLAYER}``                zset    the player's challenges: code -> expiry (ms)
``limit:{KIND:ADDRESS}``        string  requests of one kind from one client address in
                                        the current window (expires with the window);
                                        for ``login_failed`` a hash: failures, lockouts
``limit:{KIND:ADDRESS}:lock``   string  the address is locked out while it exists
==============================  ======  ==============================================

Pub/sub channels: ``{g:ID}:ev`` carries ``VERSION|ORIGIN|EVENT`` for every game event
(``ORIGIN`` is the node that made it, which has already delivered it to its own clients;
a racer's action is published only while ``{g:ID}:nodes`` names another node, or none);
``u:PLAYER`` carries direct notices to one player (match found, room updates);
``live`` announces games that start and end; ``lb:DATE:VARIANT`` a leaderboard's changes.

Every state change of a game is one Lua script call: it checks the expected state and
version, changes the state, appends the event and publishes it in one atomic step, so
two nodes (or two tabs) sending the same move apply it exactly once.
"""

from __future__ import annotations

from .accounts import AccountStore
from .challenges import ChallengeStore
from .connection import NotSent, Subscriber
from .daily import DailyStore
from .fairplay import FairPlayStore
from .health import Outage, StoreHealth
from .keys import (
    LIVE_CHANNEL,
    board_channel,
    board_of_channel,
    game_channel,
    game_event,
    game_of_channel,
    is_ghost,
    live_change,
    player_channel,
    player_of_channel,
)
from .limits import LimitStore
from .players import PlayerStore
from .race import RaceStore
from .ratings import RatingStore
from .records import (
    UNREACHABLE,
    ActionOutcome,
    GameRecord,
    RacerRecord,
    RatingRecord,
    StoreError,
    Unreplicated,
    Waiting,
)
from .rooms import RoomStore

__all__ = [
    "LIVE_CHANNEL",
    "UNREACHABLE",
    "ActionOutcome",
    "GameRecord",
    "NotSent",
    "Outage",
    "RacerRecord",
    "RatingRecord",
    "Store",
    "StoreError",
    "StoreHealth",
    "Subscriber",
    "Unreplicated",
    "Waiting",
    "board_channel",
    "board_of_channel",
    "game_channel",
    "game_event",
    "game_of_channel",
    "is_ghost",
    "live_change",
    "player_channel",
    "player_of_channel",
]


class Store(
    PlayerStore,
    AccountStore,
    RoomStore,
    RaceStore,
    DailyStore,
    RatingStore,
    LimitStore,
    FairPlayStore,
    ChallengeStore,
):
    """Game-level operations over one Redis connection pool, in nine parts by aggregate."""
