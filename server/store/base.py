"""The store's connections and scripts, shared by its parts (players, rooms, games, daily)."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from . import scripts
from .connection import Subscriber, _Pipeline
from .health import COMMAND_TIMEOUT, StoreHealth

__all__ = ["StoreBase"]


class StoreBase:
    """One Redis connection pool, the move path's pipelined connection, and the scripts."""

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
        #
        # Every command waits at most COMMAND_TIMEOUT for its answer. One that fails to reach
        # Redis is sent again once, on a fresh connection (a pooled connection may have died
        # with a Redis that has since restarted); one that timed out is not, since Redis may
        # yet carry it out.
        pool = aioredis.ConnectionPool.from_url(
            url,
            max_connections=2048,
            decode_responses=True,
            socket_timeout=COMMAND_TIMEOUT,
            socket_connect_timeout=COMMAND_TIMEOUT,
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        )
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self.url = url
        self._pipeline = _Pipeline(url, COMMAND_TIMEOUT)
        self.health = StoreHealth(self.redis.ping)
        """Whether Redis answers, and the outages this node has seen."""
        self._set_status = self.redis.register_script(scripts.SET_STATUS)
        self._presence = self.redis.register_script(scripts.PRESENCE)
        self._end = self.redis.register_script(scripts.END)
        self._join_room = self.redis.register_script(scripts.JOIN_ROOM)
        self._drop_rematch = self.redis.register_script(scripts.DROP_REMATCH)
        self._leave_room = self.redis.register_script(scripts.LEAVE_ROOM)
        self._start_room = self.redis.register_script(scripts.START_ROOM)
        self._match = self.redis.register_script(scripts.MATCH)
        self._stats_update = self.redis.register_script(scripts.STATS_UPDATE)
        self._leaderboard_submit = self.redis.register_script(scripts.LEADERBOARD_SUBMIT)
        self._add_pauses = self.redis.register_script(scripts.ADD_PAUSES)
        self._rate = self.redis.register_script(scripts.RATE)
        self._enqueue_rated = self.redis.register_script(scripts.ENQUEUE_RATED)
        self._leave_rated = self.redis.register_script(scripts.LEAVE_RATED)
        self._claim_match = self.redis.register_script(scripts.CLAIM_MATCH)
        self._lead_matchmaking = self.redis.register_script(scripts.LEAD_MATCHMAKING)

    async def close(self) -> None:
        """Close the connection pool."""
        await self._pipeline.close()
        await self.redis.aclose()

    async def ping(self) -> bool:
        """Tell whether Redis answers (within the command timeout)."""
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    @property
    def calls_waiting(self) -> int:
        """Count the move path's commands sent to Redis and not answered yet."""
        return len(self._pipeline.waiting)

    def subscriber(self) -> Subscriber:
        """Return a new (not yet open) pub/sub connection."""
        return Subscriber(self.url)
