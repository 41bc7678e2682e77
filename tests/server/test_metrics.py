"""The lock-free move statistics export exactly what prometheus-client's own types would."""

from __future__ import annotations

import random

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server.runtime.metrics import Metrics, MoveStats


def _lines(text: bytes, prefix: str) -> list[str]:
    return [line for line in text.decode().splitlines() if line.startswith(prefix)]


def test_move_statistics_match_prometheus_clients_counter_and_histogram() -> None:
    metrics = Metrics()
    reference = CollectorRegistry()
    counter = Counter("scorpion_moves", "Game actions handled, by outcome", ["outcome"], registry=reference)
    histogram = Histogram(
        "scorpion_move_seconds",
        "Time from receiving a game action to sending its answer",
        buckets=MoveStats.BUCKETS,
        registry=reference,
    )
    rng = random.Random(7)
    samples = [rng.choice(MoveStats.BUCKETS) for _ in range(50)]  # values on bucket bounds too
    samples += [rng.expovariate(200) for _ in range(500)] + [3.0]
    for seconds in samples:
        metrics.moves.observe(seconds)
        histogram.observe(seconds)
    for outcome, count in (("accepted", 541), ("rejected", 10)):
        for _ in range(count):
            counter.labels(outcome).inc()
        setattr(metrics.moves, outcome, count)
    ours, theirs = metrics.render(), generate_latest(reference)
    for prefix in ("scorpion_move_seconds_bucket", "scorpion_move_seconds_count", "scorpion_moves_total"):
        assert _lines(ours, prefix) == _lines(theirs, prefix), prefix
    (our_sum,) = _lines(ours, "scorpion_move_seconds_sum")
    (their_sum,) = _lines(theirs, "scorpion_move_seconds_sum")
    assert abs(float(our_sum.split()[1]) - float(their_sum.split()[1])) < 1e-9
