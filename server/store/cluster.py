"""Redis Cluster: the URL form, the cluster client, its scripts, its move path and pub/sub.

Everything that routes goes through redis-py's asyncio :class:`RedisCluster`: it keeps the
slot map, follows ``MOVED`` and ``ASK`` redirects, and refreshes the map after a failover.
This module adds what the store needs on top of it:

* scripts run by their SHA1 and, on ``NOSCRIPT`` (a primary that never saw the script, or
  a replica just promoted), by their source, which loads them on that primary;
* the move path's optional wait for replicas, on the connection that made the write
  (``WAIT`` counts only that connection's writes);
* pub/sub: a game's channel is a shard channel (``SSUBSCRIBE`` on the primary that owns
  the game's slot, as the library's slot map says); node-wide channels stay classic
  pub/sub, which a cluster carries to every node.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import hiredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import (
    ClusterDownError,
    MasterDownError,
    NoScriptError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)

from .connection import CommandArg, _open, _Pipeline, pack_command, script_sha
from .keys import is_shard_channel

__all__ = [
    "CLUSTER_SCHEMES",
    "ClusterCalls",
    "ClusterScript",
    "ClusterSubscriber",
    "is_cluster_url",
    "open_cluster",
    "parse_cluster_url",
    "primary_of",
]

log = logging.getLogger("scorpion.store")

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
RETRIES = 3
"""Times the client tries a command again after a lost connection or a cluster that is
down (a failover in progress), refreshing its slot map in between; with its backoff this
rides out about a second before the error reaches the caller."""


def is_cluster_url(url: str) -> bool:
    """Tell whether ``url`` names a Redis Cluster (``redis+cluster://host:port,host:port``)."""
    return url.startswith(CLUSTER_SCHEMES)


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """Split a cluster URL into its seed nodes and the client's settings.

    ``redis+cluster://[user:password@]host:port[,host:port...]`` (``rediss+cluster://`` for
    TLS). A database other than 0 is refused: a cluster has only database 0.
    """
    if not is_cluster_url(url):
        raise ValueError(f"not a cluster URL: {url!r}")
    scheme, rest = url.split("://", 1)
    credentials, _, hosts = rest.rpartition("@")
    hosts, _, path = hosts.partition("/")
    if path.strip("/") not in ("", "0"):
        raise ValueError("a Redis Cluster has only database 0")
    nodes = []
    for part in hosts.split(","):
        split = urlsplit(f"//{part}")
        if not split.hostname:
            raise ValueError(f"a cluster seed node needs a host: {part!r}")
        try:
            port = split.port or 6379
        except ValueError as exc:
            raise ValueError(f"bad port in cluster seed node {part!r}") from exc
        nodes.append((split.hostname, port))
    settings: dict[str, Any] = {"ssl": scheme == "rediss+cluster"}
    if credentials:
        user, colon, password = credentials.partition(":")
        if colon:
            settings.update(username=unquote(user) or None, password=unquote(password))
        else:
            settings["password"] = unquote(user)
    return nodes, settings


def primary_of(cluster: RedisCluster, key: str) -> ClusterNode:
    """The primary that serves ``key``'s slot, as the library's slot map says.

    Raises :class:`SlotNotCoveredError` when no node serves it for now (the library raises
    it itself for a slot missing from its map; its annotation also allows ``None``).
    """
    node = cluster.get_node_from_key(key)
    if node is None:
        raise SlotNotCoveredError(f"no primary serves the slot of {key!r} for now")
    return node


def open_cluster(url: str, timeout: float) -> RedisCluster:
    """Return a cluster client for ``url``; it connects on first use."""
    nodes, settings = parse_cluster_url(url)
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        decode_responses=True,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        max_connections=2048,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.1), RETRIES),
        **settings,
    )


class ClusterScript:
    """A Lua script run on the cluster: by SHA1, and by source where a primary lacks it.

    Called like redis-py's registered scripts: ``await script(keys=..., args=...)``, or
    with ``client=`` a pipeline, where it is queued by source (a pipeline cannot fall back
    on ``NOSCRIPT`` halfway).
    """

    def __init__(self, cluster: RedisCluster, source: str) -> None:
        self.cluster = cluster
        self.source = source
        self.sha = script_sha(source)

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = (), client: Any = None) -> Any:
        if client is not None:
            return client.eval(self.source, len(keys), *keys, *args)
        try:
            return await self.cluster.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return await self.cluster.eval(self.source, len(keys), *keys, *args)


class ClusterCalls:
    """The move path on a cluster: one script call on the primary of the game's slot.

    Each primary gets the move path's pipelined connection of one Redis (calls packed by
    hiredis, written once a loop turn, replies paired in order), so a move costs the node
    the same on a cluster as on one Redis; the library's slot map says which primary a
    game's keys live on. With ``wait_replicas``, the call is followed, on the same
    connection, by ``WAIT`` for that many replicas; :meth:`script_and_wait` then returns
    the script's answer and how many replicas confirmed the write.
    """

    def __init__(self, cluster: RedisCluster, timeout: float, settings: dict[str, Any]) -> None:
        self.cluster = cluster
        self.timeout = timeout
        self.settings = settings
        """How to reach a node besides its address: TLS and credentials (the cluster URL's)."""
        self.pipelines: dict[str, _Pipeline] = {}
        """One pipelined connection a node, by the node's name (``host:port``)."""
        self.mapped = False
        """Whether the slot map has been read (the first call reads it)."""

    @property
    def pending(self) -> int:
        """Count the calls sent and not answered, over every node."""
        return sum(pipeline.pending for pipeline in self.pipelines.values())

    async def script(self, source: str, keys: Sequence[str], args: Sequence[CommandArg]) -> Any:
        """Run a script by its SHA1 (by its source on ``NOSCRIPT``) on the primary of its slot."""
        return (await self._run(source, keys, args, ()))[0]

    async def script_and_wait(
        self, source: str, keys: Sequence[str], args: Sequence[CommandArg], replicas: int, wait_ms: int
    ) -> tuple[Any, int]:
        """Run a script, then ``WAIT replicas wait_ms`` on the same connection; return the
        script's answer and how many replicas confirmed the write."""
        result, acked = await self._run(source, keys, args, ("WAIT", replicas, wait_ms))
        return result, int(acked)

    async def _run(
        self, source: str, keys: Sequence[str], args: Sequence[CommandArg], then: tuple[CommandArg, ...]
    ) -> list[Any]:
        """Send the script (and ``then``, when given) to the primary of the keys' slot.

        Redirects are followed: ``MOVED`` (the slot has a new owner: the slot map is asked
        for again), ``ASK`` (the slot is being migrated and the keys have gone: the next node
        is asked, once), ``TRYAGAIN``, and ``NOSCRIPT`` (the script is loaded on every
        primary). In each of these the script was not run, so sending it again is safe. A
        lost connection is not retried: whether the script ran is unknown, and the caller
        says so (the library's own retries would run a racer's action a second time).
        """
        sha = script_sha(source)
        if not self.mapped:
            await self.cluster.initialize()  # once: the first call learns the slot map
            self.mapped = True
        node = self._primary_of(keys[0])
        asking = False
        for attempt in range(RETRIES + 1):
            commands: list[tuple[CommandArg, ...]] = [("ASKING",)] if asking else []
            commands.append(("EVALSHA", sha, len(keys), *keys, *args))
            if then:
                commands.append(then)
            answers = await self._send(node, commands)
            answers = answers[1:] if asking else answers
            result = answers[0]
            asking = False
            if not isinstance(result, ResponseError):
                return answers
            kind, _, detail = str(result).partition(" ")
            if kind == "NOSCRIPT":
                await self.cluster.script_load(source)  # on every primary
            elif kind == "ASK":
                host, _, port = detail.rpartition(" ")[2].rpartition(":")
                node = await self._node_at(host, int(port))
                asking = True
            elif kind in ("MOVED", "TRYAGAIN"):
                if attempt == RETRIES:
                    break
                await asyncio.sleep(0.05 * attempt)
                await self.cluster.nodes_manager.initialize()
                node = self._primary_of(keys[0])
            elif kind == "CLUSTERDOWN":
                raise ClusterDownError(detail)  # failing over: the script did not run
            elif kind == "MASTERDOWN":
                raise MasterDownError(detail)
            else:
                raise result
        raise TryAgainError("the game's slot kept moving: try again")

    def _primary_of(self, key: str) -> ClusterNode:
        """The primary that serves ``key``'s slot, as the library's slot map says."""
        return primary_of(self.cluster, key)

    async def _send(self, node: ClusterNode, commands: list[tuple[CommandArg, ...]]) -> list[Any]:
        """Send ``commands`` back to back on the node's pipelined connection; return every
        reply, an error reply as its ``ResponseError``.

        A lost connection raises (its commands' outcome is unknown; :class:`NotSent` where
        they were never written) and the slot map is asked for again, since the node may
        have failed.
        """
        pipeline = self.pipelines.get(node.name)
        if pipeline is None:
            settings = {**self.settings, "host": node.host, "port": node.port}
            pipeline = self.pipelines[node.name] = _Pipeline(settings, self.timeout)
        try:
            return await pipeline.run(commands)
        except Exception:
            with contextlib.suppress(Exception):
                await self.cluster.nodes_manager.initialize()
            raise

    async def _node_at(self, host: str, port: int) -> ClusterNode:
        node = self.cluster.get_node(host=host, port=port)
        if node is None:
            await self.cluster.nodes_manager.initialize()
            node = self.cluster.get_node(host=host, port=port)
        if node is None:
            raise ConnectionError(f"the cluster sent the game's slot to an unknown node {host}:{port}")
        return node

    async def close(self) -> None:
        """Close every node's pipelined connection; calls in flight fail."""
        pipelines, self.pipelines = self.pipelines, {}
        for pipeline in pipelines.values():
            await pipeline.close()


class _ShardConnection:
    """One pub/sub connection to one cluster node, read by its own task into a shared queue."""

    def __init__(self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.name = name
        self.reader = reader
        self.writer = writer
        self.channels: set[str] = set()
        self.leaving: set[str] = set()
        """Channels this side unsubscribed: their ``sunsubscribe`` is expected."""

    def send(self, *command: str) -> None:
        self.writer.write(pack_command(command))

    def send_each(self, command: str, channels: Iterable[str]) -> None:
        """One command a channel: shard channels of several slots in one command are refused
        (CROSSSLOT), even on the node that serves all of them."""
        self.writer.write(b"".join(pack_command((command, channel)) for channel in channels))

    def close(self) -> None:
        self.writer.close()


class ClusterSubscriber:
    """Pub/sub on a cluster, with the interface of the single-endpoint subscriber.

    Classic channels share one connection to any node. A shard channel is subscribed on the
    primary that owns its slot. When that primary goes away, or the slot moves (the node
    then ends the subscription with an unasked ``sunsubscribe``), :meth:`messages` raises:
    the hub opens again, which refreshes the slot map, subscribes every channel again where
    it now lives and reads what was missed from the games' logs.
    """

    def __init__(self, cluster: RedisCluster, settings: dict[str, Any]) -> None:
        self.cluster = cluster
        self.settings = settings
        self.classic: _ShardConnection | None = None
        self.shards: dict[str, _ShardConnection] = {}
        self.queue: asyncio.Queue[tuple[str, str] | BaseException] = asyncio.Queue()
        self.tasks: list[asyncio.Task[None]] = []
        self.opening: dict[str, asyncio.Task[None]] = {}
        """Connections being opened, by node name."""
        self.unopened: dict[str, set[str]] = {}
        """Shard channels waiting for their node's connection to open."""

    async def open(self) -> None:
        """(Re)connect with a fresh slot map; no channel is subscribed afterwards."""
        self.close()
        self.queue = asyncio.Queue()
        await self.cluster.nodes_manager.initialize()
        node = self.cluster.get_random_node()
        self.classic = await self._connect(node)

    async def _connect(self, node: ClusterNode) -> _ShardConnection:
        reader, writer = await _open({**self.settings, "host": node.host, "port": node.port})
        link = _ShardConnection(node.name, reader, writer)
        self.tasks.append(asyncio.get_running_loop().create_task(self._read(link)))
        return link

    def subscribe(self, *channels: str) -> None:
        """Start receiving ``channels`` (written at once; a shard's connection may open first)."""
        classic = [c for c in channels if not is_shard_channel(c)]
        if classic and self.classic is not None:
            self.classic.send("SUBSCRIBE", *classic)
        by_node: dict[str, list[str]] = {}
        for channel in channels:
            if is_shard_channel(channel):
                by_node.setdefault(primary_of(self.cluster, channel).name, []).append(channel)
        for name, wanted in by_node.items():
            link = self.shards.get(name)
            if link is not None:
                link.channels.update(wanted)
                link.send_each("SSUBSCRIBE", wanted)
                continue
            self.unopened.setdefault(name, set()).update(wanted)
            if name not in self.opening:
                task = asyncio.get_running_loop().create_task(self._open_shard(name))
                self.opening[name] = task
                task.add_done_callback(functools.partial(self._opened, name))

    def _opened(self, name: str, _task: asyncio.Task[None]) -> None:
        """Forget the task opening the connection to a node, once it is done."""
        self.opening.pop(name, None)

    async def _open_shard(self, name: str) -> None:
        """Connect to a primary for the first shard channel it serves, then subscribe every
        channel asked for meanwhile."""
        try:
            node = self.cluster.get_node(node_name=name)
            if node is None:
                raise ConnectionError(f"cluster node {name} is not in the slot map")
            link = await self._connect(node)
            self.shards[name] = link
            wanted = self.unopened.pop(name, set())
            if wanted:
                link.channels.update(wanted)
                link.send_each("SSUBSCRIBE", wanted)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.queue.put_nowait(ConnectionError(f"cannot subscribe on cluster node {name}: {exc}"))

    def unsubscribe(self, *channels: str) -> None:
        """Stop receiving ``channels``."""
        classic = [c for c in channels if not is_shard_channel(c)]
        if classic and self.classic is not None:
            self.classic.send("UNSUBSCRIBE", *classic)
        for waiting in self.unopened.values():
            waiting.difference_update(channels)
        for link in self.shards.values():
            mine = [c for c in channels if c in link.channels]
            if mine:
                link.channels.difference_update(mine)
                link.leaving.update(mine)
                link.send_each("SUNSUBSCRIBE", mine)

    async def _read(self, link: _ShardConnection) -> None:
        parser = hiredis.Reader(encoding="utf-8")
        try:
            while True:
                data = await link.reader.read(1 << 16)
                if not data:
                    raise ConnectionError(f"cluster node {link.name} closed the pub/sub connection")
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    if isinstance(reply, hiredis.ReplyError):
                        raise ResponseError(str(reply))
                    if not isinstance(reply, list) or len(reply) != 3:
                        continue
                    kind, channel, data_ = reply
                    if kind in ("message", "smessage"):
                        self.queue.put_nowait((channel, data_))
                    elif kind == "sunsubscribe":
                        if channel in link.leaving:
                            link.leaving.discard(channel)
                        else:  # the slot moved, or its node stopped serving it
                            raise ConnectionError(f"the shard channel {channel} moved")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.queue.put_nowait(exc)

    async def messages(self) -> list[tuple[str, str]]:
        """Wait for the next messages; return ``(channel, data)`` pairs in arrival order."""
        if self.classic is None:
            raise ConnectionError("the pub/sub connection is not open")
        out: list[tuple[str, str]] = []
        item = await self.queue.get()
        while True:
            if isinstance(item, BaseException):
                raise item
            out.append(item)
            if self.queue.empty():
                return out
            item = self.queue.get_nowait()

    def close(self) -> None:
        """Close every connection."""
        for task in [*self.tasks, *self.opening.values()]:
            task.cancel()
        self.tasks, self.opening, self.unopened = [], {}, {}
        if self.classic is not None:
            self.classic.close()
        self.classic = None
        for link in self.shards.values():
            link.close()
        self.shards = {}
