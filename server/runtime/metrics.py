"""Prometheus metrics of one server process, in their own registry."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "Metrics", "MoveStats"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class MoveStats(Collector):
    """Game actions handled and their latency, counted with plain integers.

    prometheus-client's own counters and histograms take a lock on every update, made
    for threads; a server process runs its event loop in one thread, and these are
    updated on every move, so they are counted here and turned into metric families
    only when ``/metrics`` is read.
    """

    BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)

    def __init__(self) -> None:
        self.accepted = 0
        self.rejected = 0
        self.counts = [0] * (len(self.BUCKETS) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        """Count one answered action that took ``seconds``."""
        self.counts[bisect_left(self.BUCKETS, seconds)] += 1
        self.total += seconds

    def collect(self) -> Iterator[Metric]:
        moves = CounterMetricFamily("scorpion_moves", "Game actions handled, by outcome", labels=["outcome"])
        moves.add_metric(["accepted"], self.accepted)
        moves.add_metric(["rejected"], self.rejected)
        yield moves
        buckets: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip((*map(str, self.BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            buckets.append((bound, running))
        latency = HistogramMetricFamily(
            "scorpion_move_seconds", "Time from receiving a game action to sending its answer"
        )
        latency.add_metric([], buckets, sum_value=self.total)
        yield latency


class Metrics:
    """The counters, gauges and histograms the server exports at ``/metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.connections = Gauge("scorpion_connections", "Open websocket connections", registry=self.registry)
        self.live_games = Gauge(
            "scorpion_live_games", "Races in progress on this node", registry=self.registry
        )
        self.store_up = Gauge(
            "scorpion_store_up", "1 while this node reaches Redis, 0 during an outage", registry=self.registry
        )
        self.store_waiting = Gauge(
            "scorpion_store_calls_waiting",
            "Game actions sent to Redis and not answered yet",
            registry=self.registry,
        )
        self.moves = MoveStats()
        self.registry.register(self.moves)
        self.redis_errors = Counter(
            "scorpion_redis_errors", "Failed Redis operations", registry=self.registry
        )
        self.errors_sent = Counter(
            "scorpion_errors_sent",
            "Error messages sent to clients, by code",
            ["code"],
            registry=self.registry,
        )
        self.resyncs = Counter("scorpion_resyncs", "Slow connections resynced", registry=self.registry)
        self.spectators = Gauge(
            "scorpion_spectators", "Spectators connected to this node", registry=self.registry
        )
        self.rematches = Counter(
            "scorpion_rematches", "Rematch rooms opened after a race", registry=self.registry
        )
        self.limited = Counter(
            "scorpion_limited",
            "Requests refused by an abuse limit per client address, by limit",
            ["limit"],
            registry=self.registry,
        )
        self.rated_matches = Counter(
            "scorpion_rated_matches", "Rated quick matches formed by this node", registry=self.registry
        )
        self.ratings_updated = Counter(
            "scorpion_ratings_updated", "Racers' ratings updated after rated races", registry=self.registry
        )
        self.store_restarts = Counter(
            "scorpion_store_restarts",
            "Times the embedded store exited on its own and was started again",
            registry=self.registry,
        )

    def render(self) -> bytes:
        """Return the metrics in the Prometheus text format."""
        return generate_latest(self.registry)
