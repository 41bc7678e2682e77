"""The store's connections and scripts, shared by its parts (players, rooms, games, daily)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from . import scripts
from .cluster import (
    ClusterCalls,
    ClusterScript,
    ClusterSubscriber,
    is_cluster_url,
    open_cluster,
    parse_cluster_url,
)
from .connection import Subscriber, _Pipeline
from .health import COMMAND_TIMEOUT, StoreHealth

__all__ = ["StoreBase"]


class StoreBase:
    """One Redis connection pool, the move path's pipelined connection, and the scripts."""

    def __init__(
        self, url: str, daily_secret: str = "", origin: str = "", instance: str = "", wait_replicas: int = 0
    ) -> None:
        self.configured_secret = daily_secret
        self.origin = origin
        """Node name put on every game event this store publishes (``VERSION|ORIGIN|EVENT``)."""
        self.instance = instance or origin
        """This process's name in presence counts and heartbeats (unique even when a node
        restarts under the same name, so a restart never inherits its predecessor's counts)."""
        self.wait_replicas = wait_replicas
        """Replicas that must have a racer's action before it is acknowledged (0: the primary's
        acceptance is enough)."""
        self.url = url
        self.cluster: RedisCluster | None = None
        if is_cluster_url(url):
            self.cluster = open_cluster(url, COMMAND_TIMEOUT)
            self.redis = cast(aioredis.Redis, self.cluster)  # the same commands, routed by slot
            self._pipeline: _Pipeline | ClusterCalls = ClusterCalls(
                self.cluster, COMMAND_TIMEOUT, parse_cluster_url(url)[1]
            )
            self.health = StoreHealth(self._probe_cluster)
        else:
            # A pool large enough for a burst (hundreds of hellos at once); redis-py's default
            # cap refused such bursts with "too many connections". A blocking pool would avoid
            # the cap too, but its checkout costs about 100 us a command on the move path.
            #
            # Every command waits at most COMMAND_TIMEOUT for its answer. One that fails to
            # reach Redis is sent again once, on a fresh connection (a pooled connection may
            # have died with a Redis that has since restarted); one that timed out is not,
            # since Redis may yet carry it out.
            pool = aioredis.ConnectionPool.from_url(
                url,
                max_connections=2048,
                decode_responses=True,
                socket_timeout=COMMAND_TIMEOUT,
                socket_connect_timeout=COMMAND_TIMEOUT,
                retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            )
            self.redis = aioredis.Redis(connection_pool=pool)
            self._pipeline = _Pipeline(url, COMMAND_TIMEOUT)
            self.health = StoreHealth(self.redis.ping)
        """Whether Redis answers, and the outages this node has seen."""
        self._set_status = self._script(scripts.SET_STATUS)
        self._presence = self._script(scripts.PRESENCE)
        self._end = self._script(scripts.END)
        self._join_room = self._script(scripts.JOIN_ROOM)
        self._drop_rematch = self._script(scripts.DROP_REMATCH)
        self._leave_room = self._script(scripts.LEAVE_ROOM)
        self._start_room = self._script(scripts.START_ROOM)
        self._match = self._script(scripts.MATCH)
        self._stats_update = self._script(scripts.STATS_UPDATE)
        self._leaderboard_submit = self._script(scripts.LEADERBOARD_SUBMIT)
        self._add_pauses = self._script(scripts.ADD_PAUSES)
        self._rate = self._script(scripts.RATE)
        self._enqueue_rated = self._script(scripts.ENQUEUE_RATED)
        self._leave_rated = self._script(scripts.LEAVE_RATED)
        self._claim_match = self._script(scripts.CLAIM_MATCH)
        self._lead_matchmaking = self._script(scripts.LEAD_MATCHMAKING)

    def _script(self, source: str) -> Any:
        """Return a callable script: redis-py's own on one Redis, one of a cluster's on a cluster."""
        if self.cluster is not None:
            return ClusterScript(self.cluster, source)
        return self.redis.register_script(source)

    async def _probe_cluster(self) -> bool:
        """Ping every primary; after a failure, ask the cluster for its slot map again (a
        replica may have been promoted meanwhile) so that the next probe reaches it."""
        assert self.cluster is not None
        try:
            return bool(await self.cluster.ping(target_nodes=RedisCluster.PRIMARIES))
        except Exception:
            with contextlib.suppress(Exception):
                await self.cluster.nodes_manager.initialize()
            raise

    async def publish_all(self, messages: Sequence[tuple[str, str]]) -> None:
        """Publish ``(channel, text)`` pairs on classic channels: in one round trip on one
        Redis, side by side on a cluster (whose pipelines refuse ``PUBLISH``)."""
        if self.cluster is not None:
            await asyncio.gather(*(self.cluster.publish(channel, text) for channel, text in messages))
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for channel, text in messages:
                pipe.publish(channel, text)
            await pipe.execute()

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
        return self._pipeline.pending

    def subscriber(self) -> Subscriber | ClusterSubscriber:
        """Return a new (not yet open) pub/sub connection."""
        if self.cluster is not None:
            return ClusterSubscriber(self.cluster, parse_cluster_url(self.url)[1])
        return Subscriber(self.url)

    async def _expire_with_player(self, player_id: str, keys: Sequence[str]) -> None:
        """Give keys just written for a player the expiry their ``player:ID`` has (none if it
        has none), so that they go with it."""
        ttl_ms = int(await self.redis.pttl(f"player:{player_id}"))
        if ttl_ms > 0:
            await self._pexpire_each(keys, ttl_ms)

    async def _pexpire_each(self, keys: Sequence[str], ttl_ms: int) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:  # keys of many slots
            for key in keys:
                pipe.pexpire(key, ttl_ms)
            await pipe.execute()
