"""The one module that talks to Redis. Everything above it speaks in game terms.

Keys (every key of one game shares the hash tag ``{g:ID}``, so each per-game script
touches one Redis Cluster slot; so do the keys of one room and of one leaderboard; no
script reaches a key it is not given, and no transaction spans two slots):

==============================  ======  ==============================================
key                             type    what it holds
==============================  ======  ==============================================
``player:ID``                   hash    name, created, current room and game
``token:SHA256``                string  player id of a secret token (only hashes stored)
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
==============================  ======  ==============================================

Pub/sub channels: ``{g:ID}:ev`` carries ``VERSION|ORIGIN|EVENT`` for every game event
(``ORIGIN`` is the node that made it, which has already delivered it to its own clients);
``u:PLAYER`` carries direct notices to one player (match found, room updates);
``live`` announces games that start and end; ``lb:DATE:VARIANT`` a leaderboard's changes.

Every state change of a game is one Lua script call: it checks the expected state and
version, changes the state, appends the event and publishes it in one atomic step, so
two nodes (or two tabs) sending the same move apply it exactly once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import json
import logging
import secrets
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.connection import SSLConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "UNREACHABLE",
    "ActionOutcome",
    "GameRecord",
    "RacerRecord",
    "Store",
    "StoreError",
    "Subscriber",
    "board_channel",
    "game_channel",
    "player_channel",
]

log = logging.getLogger("scorpion.store")

ROOM_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ROOM_CODE_LENGTH = 6
FORGOTTEN_NAME = "forgotten player"
NODES_KEY = "nodes"
"""Sorted set of node names by their last heartbeat (ms)."""
LIVE_CHANNEL = "live"
"""Pub/sub channel announcing games that start (``+ID``) and end (``-ID``)."""


UNREACHABLE: tuple[type[BaseException], ...] = (
    ConnectionError,
    OSError,
    TimeoutError,
    RedisConnectionError,  # redis-py's own, not the builtin; also raised while Redis loads its data
    RedisTimeoutError,
)
"""The errors that mean Redis could not be reached just now (the request may be retried)."""


class StoreError(RuntimeError):
    """Raise when a store operation is refused for a reason the caller must report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _game_key(game_id: str, part: str) -> str:
    return f"{{g:{game_id}}}:{part}"


def _rematch_key(game_id: str, part: str = "") -> str:
    return f"rematch:{{{game_id}}}:{part}" if part else f"rematch:{{{game_id}}}"


def _room_key(code: str, part: str = "") -> str:
    return f"room:{{{code}}}:{part}" if part else f"room:{{{code}}}"


def _board_key(date: str, variant: str) -> str:
    return f"lb:{{{date}:{variant}}}"


def board_channel(date: str, variant: str) -> str:
    """Return the pub/sub channel announcing changes of a day's leaderboard."""
    return f"lb:{date}:{variant}"


def game_channel(game_id: str) -> str:
    """Return the pub/sub channel of a game's events."""
    return _game_key(game_id, "ev")


def player_channel(player_id: str) -> str:
    """Return the pub/sub channel of direct notices to one player."""
    return f"u:{player_id}"


def _token_key(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()


# ARGV: seen version, based-on version, op, move, event, origin, summary, status[, finished]
# The game's channel is derived from KEYS[1] ("{g:ID}:meta" -> "{g:ID}:ev").
_ACT = """
local meta = redis.call('HMGET', KEYS[1], 'state', 'ver')
if meta[1] ~= 'racing' then return {'over', meta[1] or ''} end
local racer = redis.call('HMGET', KEYS[2], 'changed', 'status')
local changed = tonumber(racer[1] or '-1')
if changed ~= tonumber(ARGV[2]) then return {'conflict', tostring(changed)} end
if racer[2] ~= 'playing' then return {'done', racer[2] or ''} end
local current = tonumber(meta[2])
local seen = tonumber(ARGV[1])
if seen < changed or seen > current then return {'stale', tostring(changed)} end
local ver = current + 1
redis.call('HSET', KEYS[1], 'ver', ver)
if ARGV[3] == 'push' then
  redis.call('RPUSH', KEYS[3], ARGV[4])
end
if ARGV[9] then
  redis.call('HSET', KEYS[2], 'changed', ver, 'summary', ARGV[7], 'status', ARGV[8], 'finished', ARGV[9])
else
  redis.call('HSET', KEYS[2], 'changed', ver, 'summary', ARGV[7], 'status', ARGV[8])
end
redis.call('RPUSH', KEYS[4], ARGV[5])
redis.call('PUBLISH', string.sub(KEYS[1], 1, -5) .. 'ev', ver .. '|' .. ARGV[6] .. '|' .. ARGV[5])
return {'ok', tostring(ver)}
"""

# KEYS[1] online:PLAYER; ARGV[1] node, ARGV[2] a change of its count, 'drop' (a dead node) or
# 'set' (ARGV[3] is the count: a node restating its connections).
_PRESENCE = """
if ARGV[2] == 'drop' then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif ARGV[2] == 'set' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('EXPIRE', KEYS[1], 86400)
elseif tonumber(ARGV[2]) ~= 0 then
  if redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
  redis.call('EXPIRE', KEYS[1], 86400)
end
local total = 0
for _, count in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(count) end
return total
"""

_SET_STATUS = """
if redis.call('HGET', KEYS[1], 'state') ~= 'racing' then return 0 end
if redis.call('HGET', KEYS[2], 'status') ~= 'playing' then return 0 end
local ver = redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('HSET', KEYS[2], 'changed', ver, unpack(ARGV, 4))
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('PUBLISH', ARGV[2], ver .. '|' .. ARGV[3] .. '|' .. ARGV[1])
return ver
"""

_END = """
if redis.call('HGET', KEYS[1], 'state') ~= 'racing' then return 0 end
local ver = redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('HSET', KEYS[1], 'state', 'ended', 'ended', ARGV[3], 'standings', ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ver .. '|' .. ARGV[6] .. '|' .. ARGV[1])
for i = 3, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return ver
"""

_JOIN_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 'room_started' end
local members = redis.call('LRANGE', KEYS[2], 0, -1)
for _, m in ipairs(members) do if m == ARGV[1] then return 'ok' end end
if #members >= tonumber(redis.call('HGET', KEYS[1], 'max_players')) then return 'room_full' end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 'ok'
"""

_LEAVE_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
local removed = redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if removed == 0 then return 'not_member' end
redis.call('HINCRBY', KEYS[1], 'ver', 1)
if redis.call('HGET', KEYS[1], 'host') == ARGV[1] then
  local next = redis.call('LINDEX', KEYS[2], 0)
  if next then redis.call('HSET', KEYS[1], 'host', next) else
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) return 'closed' end
end
return 'ok'
"""

_START_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
if redis.call('HGET', KEYS[1], 'host') ~= ARGV[1] then return 'not_host' end
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 'room_started' end
if redis.call('LLEN', KEYS[2]) < 2 then return 'not_enough_players' end
redis.call('HSET', KEYS[1], 'state', 'starting', 'game', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return 'ok'
"""

_DROP_REMATCH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

_MATCH = """
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then return {} end
local popped = redis.call('ZPOPMIN', KEYS[1], ARGV[1])
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
return ids
"""


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """What the store did with a game action: ``ok`` with the new version, or why not."""

    result: str
    value: str

    @property
    def version(self) -> int:
        """Return the new event version (only meaningful when ``result == 'ok'``)."""
        return int(self.value)


@dataclass(slots=True)
class RacerRecord:
    """One racer of a game as stored: status, summary fields and move list."""

    player_id: str
    name: str
    status: str
    changed: int
    fields: dict[str, str]
    moves: list[str]


@dataclass(slots=True)
class GameRecord:
    """A game as stored (the secret number and salt included: server-side only)."""

    game_id: str
    meta: dict[str, str]
    racers: list[RacerRecord]

    @property
    def version(self) -> int:
        """Return the game's current event version."""
        return int(self.meta.get("ver", "0"))

    @property
    def roster(self) -> list[dict[str, str]]:
        """Return the racers' ids and names in seat order."""
        result: list[dict[str, str]] = json.loads(self.meta["roster"])
        return result


async def _open(settings: Mapping[str, Any]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a raw connection to Redis from redis-py's parsed URL settings, authenticated."""
    if "path" in settings:
        reader, writer = await asyncio.open_unix_connection(settings["path"])
    else:
        tls = ssl.create_default_context() if settings.get("connection_class") is SSLConnection else None
        reader, writer = await asyncio.open_connection(
            settings.get("host", "localhost"), settings.get("port", 6379), ssl=tls
        )
    if settings.get("password"):
        user = settings.get("username")
        auth = ("AUTH", user, settings["password"]) if user else ("AUTH", settings["password"])
        writer.write(hiredis.pack_command(auth))
        parser = hiredis.Reader(encoding="utf-8")
        reply: Any = False
        while reply is False:
            data = await reader.read(4096)
            if not data:
                writer.close()
                raise ConnectionError("Redis closed the connection")
            parser.feed(data)
            reply = parser.gets()
        if isinstance(reply, hiredis.ReplyError):
            writer.close()
            raise ResponseError(str(reply))
    return reader, writer


def _log_select_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("could not select the Redis database: %s", future.exception())


class _Pipeline:
    """One Redis connection that carries many commands at once, for the move path.

    Every racer's action is one script call. Through redis-py each call checks a
    connection out of the pool, wraps it in retry and timeout machinery and packs its
    arguments in Python, which cost more than the script itself. Here calls are packed by
    hiredis, written to one socket as they come (pipelined: replies arrive in order, so a
    queue of futures pairs them up) and read by one task. A lost connection fails the
    calls in flight (their outcome is unknown to the caller, exactly as with a single
    command whose reply never came) and the next call reconnects.
    """

    def __init__(self, url: str) -> None:
        self.settings = parse_url(url)
        self.writer: asyncio.StreamWriter | None = None
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.outgoing: list[bytes] = []
        self.task: asyncio.Task[None] | None = None
        self.connecting = asyncio.Lock()
        self.scripts: dict[str, str] = {}

    async def _connect(self) -> asyncio.StreamWriter:
        async with self.connecting:
            if self.writer is not None:
                return self.writer
            reader, writer = await _open(self.settings)
            if self.settings.get("db"):
                writer.write(hiredis.pack_command(("SELECT", self.settings["db"])))
                selected: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                selected.add_done_callback(_log_select_failure)
                self.waiting.append(selected)
            self.writer = writer
            self.task = asyncio.get_running_loop().create_task(self._read(reader))
            return writer

    async def _read(self, reader: asyncio.StreamReader) -> None:
        parser = hiredis.Reader(encoding="utf-8")
        error: Exception = ConnectionError("Redis closed the connection")
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    break
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    future = self.waiting.popleft()
                    if not future.done():
                        if isinstance(reply, hiredis.ReplyError):
                            future.set_exception(ResponseError(str(reply)))
                        else:
                            future.set_result(reply)
        except (OSError, hiredis.ProtocolError) as exc:
            error = ConnectionError(f"lost the Redis connection: {exc}")
        finally:
            self._drop(error)

    def _drop(self, error: Exception) -> None:
        if self.writer is not None:
            self.writer.close()
        self.writer = None
        self.outgoing = []  # never sent: their calls fail below, and a new connection must not get them
        waiting, self.waiting = self.waiting, collections.deque()
        for future in waiting:
            if not future.done():
                future.set_exception(error)

    async def call(self, *args: Any) -> Any:
        """Send one command and return its reply (an error reply raises ``ResponseError``).

        Commands issued during one turn of the event loop leave in one write.
        """
        if self.writer is None:
            await self._connect()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.waiting.append(future)
        if not self.outgoing:
            loop.call_soon(self._flush)
        self.outgoing.append(hiredis.pack_command(args))
        return await future

    def _flush(self) -> None:
        outgoing, self.outgoing = self.outgoing, []
        if self.writer is not None:
            self.writer.write(b"".join(outgoing))
        # Else the connection was lost after these calls were queued: _drop failed them.

    async def script(self, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a Lua script by its SHA1, loading it on first use or after a flush."""
        sha = self.scripts.get(source)
        if sha is None:
            sha = self.scripts[source] = hashlib.sha1(source.encode()).hexdigest()
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await self.call("EVAL", source, len(keys), *keys, *args)

    async def close(self) -> None:
        """Close the connection; calls in flight fail."""
        task, self.task = self.task, None
        self._drop(ConnectionError("the store was closed"))
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class Subscriber:
    """A pub/sub connection read with hiredis: messages come back in batches, in order.

    Subscribing and unsubscribing only write the command (Redis confirms them in the
    stream, and the confirmations are skipped). After a lost connection, :meth:`open`
    again and subscribe again to every channel still wanted.
    """

    def __init__(self, url: str) -> None:
        self.settings = parse_url(url)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.parser = hiredis.Reader(encoding="utf-8")

    async def open(self) -> None:
        """(Re)connect; no channel is subscribed afterwards."""
        self.close()
        self.reader, self.writer = await _open(self.settings)
        self.parser = hiredis.Reader(encoding="utf-8")

    def subscribe(self, *channels: str) -> None:
        """Start receiving ``channels`` (nothing happens while the connection is closed)."""
        if self.writer is not None:
            self.writer.write(hiredis.pack_command(("SUBSCRIBE", *channels)))

    def unsubscribe(self, *channels: str) -> None:
        """Stop receiving ``channels``."""
        if self.writer is not None:
            self.writer.write(hiredis.pack_command(("UNSUBSCRIBE", *channels)))

    async def messages(self) -> list[tuple[str, str]]:
        """Wait for the next messages; return ``(channel, data)`` pairs in arrival order."""
        if self.reader is None:
            raise ConnectionError("the pub/sub connection is not open")
        out: list[tuple[str, str]] = []
        while not out:
            data = await self.reader.read(1 << 16)
            if not data:
                raise ConnectionError("Redis closed the pub/sub connection")
            self.parser.feed(data)
            while (reply := self.parser.gets()) is not False:
                if isinstance(reply, list) and len(reply) == 3 and reply[0] == "message":
                    out.append((reply[1], reply[2]))
                elif isinstance(reply, hiredis.ReplyError):
                    raise ResponseError(str(reply))
        return out

    def close(self) -> None:
        """Close the connection."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Store:
    """Game-level operations over one Redis connection pool."""

    def __init__(self, url: str, daily_secret: str = "", origin: str = "", instance: str = "") -> None:
        self.configured_secret = daily_secret
        self.origin = origin
        """Node name put on every game event this store publishes (``VERSION|ORIGIN|EVENT``)."""
        self.instance = instance or origin
        """This process's name in presence counts and heartbeats (unique even when a node
        restarts under the same name, so a restart never inherits its predecessor's counts)."""
        # A pool large enough for a burst (hundreds of hellos at once); redis-py's default
        # cap refused such bursts with "too many connections". A blocking pool would avoid
        # the cap too, but its checkout costs about 100 us a command on the move path.
        pool = aioredis.ConnectionPool.from_url(url, max_connections=2048, decode_responses=True)
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self.url = url
        self._pipeline = _Pipeline(url)
        self._set_status = self.redis.register_script(_SET_STATUS)
        self._presence = self.redis.register_script(_PRESENCE)
        self._end = self.redis.register_script(_END)
        self._join_room = self.redis.register_script(_JOIN_ROOM)
        self._drop_rematch = self.redis.register_script(_DROP_REMATCH)
        self._leave_room = self.redis.register_script(_LEAVE_ROOM)
        self._start_room = self.redis.register_script(_START_ROOM)
        self._match = self.redis.register_script(_MATCH)
        self._stats_update = self.redis.register_script(_STATS_UPDATE)
        self._leaderboard_submit = self.redis.register_script(_LEADERBOARD_SUBMIT)

    async def close(self) -> None:
        """Close the connection pool."""
        await self._pipeline.close()
        await self.redis.aclose()

    async def ping(self) -> bool:
        """Tell whether Redis answers."""
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    def subscriber(self) -> Subscriber:
        """Return a new (not yet open) pub/sub connection."""
        return Subscriber(self.url)

    # -- players ------------------------------------------------------------------------

    async def create_player(self, name: str, now_ms: int) -> tuple[str, str]:
        """Create an anonymous player; return its id and secret token."""
        player_id = "p" + secrets.token_hex(8)
        token = secrets.token_urlsafe(24)
        # Two keys of two cluster slots: no transaction, but the player is written first,
        # so a token that works always finds its player.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(
                f"player:{player_id}", mapping={"name": name, "created": now_ms, "token": _token_key(token)}
            )
            pipe.set(_token_key(token), player_id)
            await pipe.execute()
        return player_id, token

    async def player_by_token(self, token: str) -> tuple[str, str] | None:
        """Return the id and name of the player holding ``token``, or ``None``."""
        player_id = await self.redis.get(_token_key(token))
        if player_id is None:
            return None
        name = await self.redis.hget(f"player:{player_id}", "name")
        if name is None:
            return None
        return player_id, name

    async def rename_player(self, player_id: str, name: str) -> None:
        """Change a player's display name."""
        await self.redis.hset(f"player:{player_id}", "name", name)

    async def player_places(self, player_id: str) -> dict[str, str]:
        """Return the player's current ``room`` and ``game`` (absent fields when none)."""
        values = await self.redis.hmget(f"player:{player_id}", ["room", "game"])
        return {k: v for k, v in zip(("room", "game"), values, strict=True) if v}

    async def set_player_place(
        self, player_id: str, *, room: str | None = None, game: str | None = None
    ) -> None:
        """Record the room and game a player is in (an empty string clears one)."""
        mapping: dict[Any, Any] = {k: v for k, v in (("room", room), ("game", game)) if v is not None}
        if mapping:
            await self.redis.hset(f"player:{player_id}", mapping=mapping)

    async def notify(self, player_id: str, payload: Mapping[str, Any]) -> None:
        """Publish a direct notice to one player on whichever node holds them."""
        await self.redis.publish(player_channel(player_id), json.dumps(payload))

    # -- rooms --------------------------------------------------------------------------

    async def create_room(self, host: str, settings: Mapping[Any, Any], ttl_ms: int) -> str:
        """Create a room hosted by ``host``; return its code."""
        for _ in range(20):
            code = "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH))
            created = await self.redis.hsetnx(_room_key(code), "host", host)
            if not created:
                continue
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(_room_key(code), mapping={**settings, "state": "open", "ver": 1})
                pipe.rpush(_room_key(code, "members"), host)
                for key in (_room_key(code), _room_key(code, "members")):
                    pipe.pexpire(key, ttl_ms)
                await pipe.execute()
            return code
        raise StoreError("internal", "could not allocate a room code")

    async def room(self, code: str) -> dict[str, Any] | None:
        """Return a room's settings, members and ready set, or ``None``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(_room_key(code))
            pipe.lrange(_room_key(code, "members"), 0, -1)
            pipe.smembers(_room_key(code, "ready"))
            info, members, ready = await pipe.execute()
        if not info:
            return None
        async with self.redis.pipeline(transaction=False) as pipe:
            for member in members:
                pipe.hget(f"player:{member}", "name")
            display = [name or "?" for name in await pipe.execute()]
        return {"code": code, **info, "members": members, "names": display, "ready": sorted(ready)}

    async def join_room(self, code: str, player_id: str, ttl_ms: int) -> None:
        """Add a player to an open room, or raise :class:`StoreError`."""
        keys = [_room_key(code), _room_key(code, "members"), _room_key(code, "ready")]
        result = await self._join_room(keys=keys, args=[player_id, ttl_ms])
        if result != "ok":
            raise StoreError(result, _ROOM_REASONS.get(result, result))

    async def leave_room(self, code: str, player_id: str) -> str:
        """Remove a player from a room; return ``ok``, ``closed`` (now empty) or why not."""
        keys = [_room_key(code), _room_key(code, "members"), _room_key(code, "ready")]
        result: str = await self._leave_room(keys=keys, args=[player_id])
        return result

    async def set_ready(self, code: str, player_id: str, ready: bool) -> None:
        """Mark a room member ready or not."""
        async with self.redis.pipeline(transaction=True) as pipe:
            if ready:
                pipe.sadd(_room_key(code, "ready"), player_id)
            else:
                pipe.srem(_room_key(code, "ready"), player_id)
            pipe.hincrby(_room_key(code), "ver", 1)
            await pipe.execute()

    async def start_room(self, code: str, host: str, game_id: str) -> None:
        """Move an open room to ``starting`` with ``game_id``, or raise :class:`StoreError`."""
        keys = [_room_key(code), _room_key(code, "members")]
        result = await self._start_room(keys=keys, args=[host, game_id])
        if result != "ok":
            raise StoreError(result, _ROOM_REASONS.get(result, result))

    async def set_room_state(self, code: str, state: str) -> None:
        """Set a room's state (``open``, ``starting``, ``racing``, ``ended``)."""
        await self.redis.hset(_room_key(code), mapping={"state": state})
        await self.redis.hincrby(_room_key(code), "ver", 1)

    async def room_size(self, code: str) -> int:
        """Return a room's ``max_players``, or 0 if the room is gone."""
        return int(await self.redis.hget(_room_key(code), "max_players") or 0)

    async def rematch_room(self, game_id: str) -> str | None:
        """Return the room opened to race ``game``'s players again, if one was."""
        code: str | None = await self.redis.get(_rematch_key(game_id))
        return code

    async def claim_rematch(self, game_id: str, code: str, ttl_ms: int) -> str:
        """Make ``code`` the room of ``game``'s rematch unless another is already; return the one that is."""
        key = _rematch_key(game_id)
        if await self.redis.set(key, code, nx=True, px=ttl_ms):
            return code
        held: str | None = await self.redis.get(key)
        return held or code

    async def rematch_openings(self, game_id: str, player_id: str) -> int:
        """Return how many rematch rooms of ``game`` this player has opened."""
        return int(await self.redis.get(_rematch_key(game_id, f"opened:{player_id}")) or 0)

    async def count_rematch_opening(self, game_id: str, player_id: str, ttl_ms: int) -> None:
        """Count one more rematch room of ``game`` opened by this player."""
        key = _rematch_key(game_id, f"opened:{player_id}")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.pexpire(key, ttl_ms)
            await pipe.execute()

    async def drop_rematch(self, game_id: str, code: str) -> None:
        """Forget that ``code`` is ``game``'s rematch room (it closed, started or filled up)."""
        await self._drop_rematch(keys=[_rematch_key(game_id)], args=[code])

    # -- quick match --------------------------------------------------------------------

    async def enqueue(self, variant: str, player_id: str, now_ms: int) -> int:
        """Put a player in the quick-match queue of ``variant`` (keeping an earlier place).

        Return how many players wait, this one included.
        """
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(f"queue:{variant}", {player_id: now_ms}, nx=True)
            pipe.zcard(f"queue:{variant}")
            _, waiting = await pipe.execute()
        return int(waiting)

    async def dequeue(self, variant: str, player_id: str) -> bool:
        """Take a player out of the queue; tell whether they were in it."""
        return bool(await self.redis.zrem(f"queue:{variant}", player_id))

    async def match(self, variant: str, size: int) -> list[str]:
        """Pop the ``size`` longest-waiting players of ``variant`` if that many wait."""
        result: list[str] = await self._match(keys=[f"queue:{variant}"], args=[size])
        return result

    # -- games --------------------------------------------------------------------------

    async def create_game(
        self,
        game_id: str,
        meta: Mapping[Any, Any],
        racers: Sequence[tuple[str, str]],
        first_event: str,
        summary: Mapping[Any, Any],
    ) -> None:
        """Store a new running game with its racers and publish its first event (version 1)."""
        roster = json.dumps([{"id": pid, "name": name} for pid, name in racers])
        # The game's own keys (one cluster slot) in one transaction; then the indexes
        # outside it: the players' places and the live list.
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(
                _game_key(game_id, "meta"), mapping={**meta, "roster": roster, "state": "racing", "ver": 1}
            )
            for pid, name in racers:
                pipe.hset(
                    _game_key(game_id, f"p:{pid}"),
                    mapping={"name": name, "status": "playing", "changed": 1, **dict(summary)},
                )
            pipe.rpush(_game_key(game_id, "log"), first_event)
            pipe.publish(game_channel(game_id), f"1|{self.origin}|{first_event}")
            await pipe.execute()
        async with self.redis.pipeline(transaction=False) as pipe:
            for pid, _name in racers:
                pipe.hset(f"player:{pid}", "game", game_id)
            pipe.zadd("live", {game_id: int(meta["start"])})
            pipe.publish(LIVE_CHANNEL, "+" + game_id)
            await pipe.execute()

    async def game_state(self, game_id: str) -> str | None:
        """Return a game's state (``racing``, ``ended``), or ``None`` if no such game is kept."""
        state: str | None = await self.redis.hget(_game_key(game_id, "meta"), "state")  # type: ignore[assignment]
        return state

    async def game(self, game_id: str, *, with_moves: bool = True) -> GameRecord | None:
        """Return a stored game with every racer's record (and move list), or ``None``."""
        meta: dict[str, str] = await self.redis.hgetall(_game_key(game_id, "meta"))  # type: ignore[assignment]
        if not meta:
            return None
        roster = json.loads(meta["roster"])
        async with self.redis.pipeline(transaction=False) as pipe:
            for racer in roster:
                pipe.hgetall(_game_key(game_id, f"p:{racer['id']}"))
                if with_moves:
                    pipe.lrange(_game_key(game_id, f"m:{racer['id']}"), 0, -1)
            replies = await pipe.execute()
        per_racer = 2 if with_moves else 1
        racers = []
        for index, racer in enumerate(roster):
            fields = replies[per_racer * index]
            moves = replies[per_racer * index + 1] if with_moves else []
            racers.append(
                RacerRecord(
                    player_id=racer["id"],
                    name=racer["name"],
                    status=fields.get("status", "playing"),
                    changed=int(fields.get("changed", "1")),
                    fields=fields,
                    moves=moves,
                )
            )
        return GameRecord(game_id, meta, racers)

    async def racer(self, game_id: str, player_id: str) -> RacerRecord | None:
        """Return one racer's record, or ``None``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(_game_key(game_id, f"p:{player_id}"))
            pipe.lrange(_game_key(game_id, f"m:{player_id}"), 0, -1)
            fields, moves = await pipe.execute()
        if not fields:
            return None
        return RacerRecord(
            player_id, fields.get("name", ""), fields["status"], int(fields["changed"]), fields, moves
        )

    async def act(
        self,
        game_id: str,
        player_id: str,
        *,
        seen_version: int,
        based_on: int,
        op: str,
        move: str,
        event: str | bytes,
        summary: str | bytes,
        status: str,
        finished: int | None = None,
    ) -> ActionOutcome:
        """Commit one racer's action in one round trip.

        The script checks that the game is running, that the racer's board is still the
        one the caller validated against (``based_on``, else ``conflict``: reload and
        retry), and that the client had seen the racer's latest change (``seen_version``,
        else ``stale``); then it appends the action to the racer's list (``op`` ``push``;
        ``none`` for a status change such as resigning), stores the new summary (JSON) and
        status (and the finishing time, when given), bumps the version, appends ``event``
        and publishes it.
        """
        tag = "{g:" + game_id + "}:"
        keys = (tag + "meta", tag + "p:" + player_id, tag + "m:" + player_id, tag + "log")
        args: tuple[Any, ...] = (seen_version, based_on, op, move, event, self.origin, summary, status)
        if finished is not None:
            args += (finished,)
        result, value = await self._pipeline.script(_ACT, keys, args)
        return ActionOutcome(result, value)

    async def set_racer_status(
        self, game_id: str, player_id: str, event: str, fields: Mapping[Any, Any]
    ) -> int:
        """Change a running racer's status (e.g. ``left``); return the new version or 0."""
        keys = [_game_key(game_id, "meta"), _game_key(game_id, f"p:{player_id}"), _game_key(game_id, "log")]
        flat: list[str | int] = []
        for key, value in fields.items():
            flat.extend((key, value))
        args = [event, game_channel(game_id), self.origin, *flat]
        version: int = await self._set_status(keys=keys, args=args)
        return version

    async def end_game(
        self,
        game_id: str,
        racer_ids: Sequence[str],
        event: str,
        ended_ms: int,
        standings: str,
        keep_ms: int,
    ) -> int:
        """End a running game exactly once; return the final version, or 0 if already ended."""
        keys = [_game_key(game_id, "meta"), _game_key(game_id, "log")]
        for pid in racer_ids:
            keys.append(_game_key(game_id, f"p:{pid}"))
            keys.append(_game_key(game_id, f"m:{pid}"))
        version: int = await self._end(
            keys=keys, args=[event, game_channel(game_id), ended_ms, standings, keep_ms, self.origin]
        )
        if version:
            await self.drop_live(game_id)
        return version

    async def drop_live(self, game_id: str) -> None:
        """Take a game off the live list (it ended, or is gone) and say so on its channel,
        once: only the call that removes it announces it."""
        if await self.redis.zrem("live", game_id):
            await self.redis.publish(LIVE_CHANNEL, "-" + game_id)

    async def events(self, game_id: str, after: int) -> list[tuple[int, str]]:
        """Return the game's events with versions greater than ``after``, in order."""
        entries: list[str] = await self.redis.lrange(_game_key(game_id, "log"), after, -1)  # type: ignore[assignment]
        return [(after + 1 + index, entry) for index, entry in enumerate(entries)]

    async def save_analysis(self, game_id: str, player_id: str, analysis: str, keep_ms: int) -> None:
        """Keep a racer's post-game analysis with the game."""
        await self.redis.set(_game_key(game_id, f"a:{player_id}"), analysis, px=keep_ms)

    async def analysis(self, game_id: str, player_id: str) -> str | None:
        """Return a racer's stored post-game analysis, or ``None`` while it is computed."""
        result: str | None = await self.redis.get(_game_key(game_id, f"a:{player_id}"))  # type: ignore[assignment]
        return result

    async def presence(self, player_id: str, delta: int) -> int:
        """Add ``delta`` to the player's open connections on this node; return their count on
        every node (``delta`` 0 only reads it)."""
        count: int = await self._presence(keys=[f"online:{player_id}"], args=[self.instance, delta])
        return count

    async def forget_node_presence(self, player_id: str, node: str) -> int:
        """Drop a dead node's connections of a player; return the player's count on the others."""
        count: int = await self._presence(keys=[f"online:{player_id}"], args=[node, "drop"])
        return count

    async def restate_presence(self, counts: Mapping[str, int]) -> None:
        """Set this node's connection counts of players (after it was silent too long)."""
        if not counts:
            return
        async with self.redis.pipeline(transaction=False) as pipe:  # one round trip for all
            for player_id, count in counts.items():
                args = [self.instance, "set", count]
                await self._presence(keys=[f"online:{player_id}"], args=args, client=pipe)
            await pipe.execute()

    async def heartbeat(self, now_ms: int, timeout_ms: int) -> list[str]:
        """Say this node is alive; return the nodes silent for longer than ``timeout_ms``.

        Nodes silent for ten timeouts are forgotten: every live node has long handled them.
        """
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(NODES_KEY, {self.instance: now_ms})
            pipe.zrangebyscore(NODES_KEY, "-inf", now_ms - timeout_ms)
            pipe.zremrangebyscore(NODES_KEY, "-inf", now_ms - 10 * timeout_ms)
            _, silent, _ = await pipe.execute()
        return [node for node in silent if node != self.instance]

    async def set_spectators(self, game_id: str, node: str, count: int) -> int:
        """Record this node's spectator count of a game; return the count over all nodes."""
        key = _game_key(game_id, "watchers")
        async with self.redis.pipeline(transaction=False) as pipe:
            if count:
                pipe.hset(key, node, count)
            else:
                pipe.hdel(key, node)
            pipe.expire(key, 3600)
            pipe.hvals(key)
            *_, values = await pipe.execute()
        return sum(int(v) for v in values)

    async def live_games(self, limit: int = 200) -> list[str]:
        """Return the ids of running games, oldest first."""
        result: list[str] = await self.redis.zrange("live", 0, limit - 1)  # type: ignore[assignment]
        return result

    # -- statistics -------------------------------------------------------------------

    async def count_start(self, player_id: str, variant: str) -> None:
        """Count a game started by a player in a variant."""
        await self.redis.hincrby(f"stats:{player_id}:{variant}", "started", 1)

    async def count_finish(
        self, player_id: str, variant: str, *, won: bool, score: int, elapsed: int, daily: bool
    ) -> None:
        """Record a finished game in the player's statistics of that variant."""
        key = f"stats:{player_id}:{variant}"
        await self._stats_update(keys=[key], args=[int(won), score, elapsed, int(daily)])

    async def stats(self, player_id: str, variants: Sequence[str]) -> dict[str, dict[str, str]]:
        """Return the raw statistics of a player for each variant that has any."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for variant in variants:
                pipe.hgetall(f"stats:{player_id}:{variant}")
            replies = await pipe.execute()
        return {variant: reply for variant, reply in zip(variants, replies, strict=True) if reply}

    async def add_result(self, player_id: str, game_id: str) -> None:
        """Remember a finished game of a player (the newest 1,000 are kept)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.lpush(f"results:{player_id}", game_id)
            pipe.ltrim(f"results:{player_id}", 0, 999)
            await pipe.execute()

    # -- saved solo games -------------------------------------------------------------

    async def save_game(self, player_id: str, game_id: str, start_ms: int) -> None:
        """List a solo game in progress among the player's saved games."""
        await self.redis.zadd(f"saved:{player_id}", {game_id: start_ms})

    async def unsave_game(self, player_id: str, game_id: str) -> None:
        """Take a game off the player's saved games."""
        await self.redis.zrem(f"saved:{player_id}", game_id)

    async def saved_games(self, player_id: str) -> list[str]:
        """Return the ids of the player's saved games, newest first."""
        result: list[str] = await self.redis.zrevrange(f"saved:{player_id}", 0, 199)  # type: ignore[assignment]
        return result

    # -- daily ------------------------------------------------------------------------

    async def daily_secret(self) -> str:
        """Return the secret daily numbers derive from, creating it once for all nodes."""
        if self.configured_secret:
            return self.configured_secret
        await self.redis.set("daily:secret", secrets.token_hex(32), nx=True)
        secret: str = await self.redis.get("daily:secret")  # type: ignore[assignment]
        return secret

    async def daily_deal(self, date: str, variant: str) -> dict[str, str]:
        """Return the stored number, salt and commitment of a day's deal (empty if none yet)."""
        result: dict[str, str] = await self.redis.hgetall(f"daily:{date}:{variant}")  # type: ignore[assignment]
        return result

    async def set_daily_deal(
        self, date: str, variant: str, deal: Mapping[str, str], keep_ms: int
    ) -> dict[str, str]:
        """Store a day's deal unless another node did first; return the stored one."""
        key = f"daily:{date}:{variant}"
        if await self.redis.hsetnx(key, "number", deal["number"]):
            await self.redis.hset(key, mapping={"salt": deal["salt"], "commitment": deal["commitment"]})
            await self.redis.pexpire(key, keep_ms)
        while True:
            stored = await self.daily_deal(date, variant)
            if "commitment" in stored:
                return stored
            await asyncio.sleep(0.01)  # the winner is writing salt and commitment

    async def claim_daily_attempt(
        self, date: str, variant: str, player_id: str, game_id: str, keep_ms: int
    ) -> bool:
        """Claim the player's one ranked attempt of a day; tell whether it was still free."""
        key = f"daily:{date}:{variant}:attempts"
        claimed = bool(await self.redis.hsetnx(key, player_id, game_id))
        if claimed:
            await self.redis.pexpire(key, keep_ms)
        return claimed

    async def daily_attempt(self, date: str, variant: str, player_id: str) -> tuple[str | None, bool]:
        """Return the player's ranked attempt of a day (game id or None) and whether it is over."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(f"daily:{date}:{variant}:attempts", player_id)
            pipe.sismember(f"daily:{date}:{variant}:done", player_id)
            game_id, done = await pipe.execute()
        return game_id, bool(done)

    async def finish_daily_attempt(self, date: str, variant: str, player_id: str, keep_ms: int) -> None:
        """Mark the player's ranked attempt of a day as over."""
        key = f"daily:{date}:{variant}:done"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(key, player_id)
            pipe.pexpire(key, keep_ms)
            await pipe.execute()

    # -- leaderboards -----------------------------------------------------------------

    async def submit_score(
        self, date: str, variant: str, player_id: str, sort_key: float, entry: str, keep_ms: int
    ) -> bool:
        """Put a ranked result on a day's board (once per player); tell whether it was added."""
        board = _board_key(date, variant)
        # The player's index of boards first (another cluster slot): forget-me finds every
        # board the player may be on.
        await self.redis.sadd(f"boards:{player_id}", board)
        added = await self._leaderboard_submit(
            keys=[board, f"{board}:e"], args=[player_id, sort_key, entry, keep_ms]
        )
        if added:
            await self.redis.publish(board_channel(date, variant), player_id)
        return bool(added)

    async def board_page(
        self, date: str, variant: str, offset: int, limit: int
    ) -> tuple[int, list[tuple[str, str]]]:
        """Return the board's size and its entries from rank ``offset + 1`` (player, entry)."""
        key = _board_key(date, variant)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zcard(key)
            pipe.zrange(key, offset, offset + limit - 1)
            total, players = await pipe.execute()
        entries = await self.redis.hmget(f"{key}:e", players) if players else []
        return int(total), [(p, e) for p, e in zip(players, entries, strict=True) if e]

    async def board_rank(self, date: str, variant: str, player_id: str) -> int | None:
        """Return the player's 0-based rank on a day's board, or ``None``."""
        rank = await self.redis.zrank(_board_key(date, variant), player_id)
        return None if rank is None else int(rank)

    # -- forget me --------------------------------------------------------------------

    async def forget_player(self, player_id: str, variants: Sequence[str]) -> dict[str, int | bool]:
        """Delete a player's identity, saved games, statistics and leaderboard entries.

        Finished games others played with them stay replayable under the name
        "forgotten player"; aggregate counters without personal data remain.
        """
        record = await self.redis.hgetall(f"player:{player_id}")
        removed: dict[str, int | bool] = {"identity": bool(record)}
        saved = await self.saved_games(player_id)
        for game_id in saved:
            keys = [_game_key(game_id, part) for part in ("meta", "log", f"p:{player_id}", f"m:{player_id}")]
            await self.redis.delete(*keys)
            await self.redis.zrem("live", game_id)
        removed["saved_games"] = len(saved)
        removed["statistics"] = await self._delete_each(
            [f"stats:{player_id}:{variant}" for variant in variants]
        )
        boards: list[str] = list(await self.redis.smembers(f"boards:{player_id}"))  # type: ignore[arg-type]
        entries = 0
        for board in boards:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(board, player_id)
                pipe.hdel(f"{board}:e", player_id)
                gone, _ = await pipe.execute()
            entries += int(gone)
            await self.redis.publish(board.replace("{", "").replace("}", ""), player_id)  # its channel
        removed["leaderboard_entries"] = entries
        games: list[str] = await self.redis.lrange(f"results:{player_id}", 0, -1)  # type: ignore[assignment]
        renamed = 0
        for game_id in games:
            renamed += await self._scrub_name(game_id, player_id)
        removed["names_in_finished_games"] = renamed
        keys = [f"player:{player_id}", f"saved:{player_id}", f"boards:{player_id}", f"results:{player_id}"]
        keys.append(f"online:{player_id}")
        if record.get("token"):
            keys.append(record["token"])
        await self._delete_each(keys)
        return removed

    async def _delete_each(self, keys: Sequence[str]) -> int:
        """Delete keys that may lie in different cluster slots; return how many existed."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.delete(key)
            return sum(int(n) for n in await pipe.execute())

    async def _scrub_name(self, game_id: str, player_id: str) -> int:
        meta_key = _game_key(game_id, "meta")
        roster_text = await self.redis.hget(meta_key, "roster")
        if roster_text is None:
            return 0
        roster = json.loads(roster_text)
        for racer in roster:
            if racer["id"] == player_id:
                racer["name"] = FORGOTTEN_NAME
        await self.redis.hset(meta_key, "roster", json.dumps(roster))
        await self.redis.hset(_game_key(game_id, f"p:{player_id}"), "name", FORGOTTEN_NAME)
        standings_text = await self.redis.hget(meta_key, "standings")
        if standings_text:
            standings = json.loads(standings_text)
            for row in standings:
                if row["player"] == player_id:
                    row["name"] = FORGOTTEN_NAME
            await self.redis.hset(meta_key, "standings", json.dumps(standings))
            last = await self.redis.lindex(_game_key(game_id, "log"), -1)
            if last:
                event = json.loads(last)
                if event.get("type") == "race_ended":
                    event["standings"] = standings
                    await self.redis.lset(_game_key(game_id, "log"), -1, json.dumps(event))
        return 1


_STATS_UPDATE = """
local key = KEYS[1]
local won, score, elapsed = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('HINCRBY', key, 'finished', 1)
redis.call('HINCRBY', key, 'total_score', score)
if tonumber(ARGV[4]) == 1 then redis.call('HINCRBY', key, 'dailies', 1) end
local best = tonumber(redis.call('HGET', key, 'best_score') or '-1')
if score > best then redis.call('HSET', key, 'best_score', score) end
if won == 1 then
  redis.call('HINCRBY', key, 'won', 1)
  local streak = redis.call('HINCRBY', key, 'streak', 1)
  local longest = tonumber(redis.call('HGET', key, 'longest_streak') or '0')
  if streak > longest then redis.call('HSET', key, 'longest_streak', streak) end
  local fastest = redis.call('HGET', key, 'best_time')
  if not fastest or elapsed < tonumber(fastest) then redis.call('HSET', key, 'best_time', elapsed) end
else
  redis.call('HSET', key, 'streak', 0)
end
return 1
"""

_LEADERBOARD_SUBMIT = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
"""


_ROOM_REASONS = {
    "no_such_room": "no room has that code",
    "room_started": "that room's race has already started",
    "room_full": "that room is full",
    "not_host": "only the room's host can start the race",
    "not_enough_players": "a race needs at least two players in the room",
}
