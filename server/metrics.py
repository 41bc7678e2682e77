"""Prometheus metrics of one server process, in their own registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The counters, gauges and histograms the server exports at ``/metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.connections = Gauge("scorpion_connections", "Open websocket connections", registry=self.registry)
        self.live_games = Gauge(
            "scorpion_live_games", "Races in progress on this node", registry=self.registry
        )
        self.moves = Counter(
            "scorpion_moves", "Game actions handled, by outcome", ["outcome"], registry=self.registry
        )
        # Children resolved once: a label lookup on every move costs more than the increment.
        self.moves_accepted = self.moves.labels("accepted")
        self.moves_rejected = self.moves.labels("rejected")
        self.move_latency = Histogram(
            "scorpion_move_seconds",
            "Time from receiving a game action to sending its answer",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=self.registry,
        )
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

    def render(self) -> bytes:
        """Return the metrics in the Prometheus text format."""
        return generate_latest(self.registry)
