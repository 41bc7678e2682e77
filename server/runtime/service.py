"""What every part of a node is built on: its name, settings, store, pub/sub hub, metrics, tasks."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..store import Store
from .hub import Hub
from .metrics import Metrics
from .tasks import Tasks

__all__ = ["Plumbing", "Service"]


@dataclass(frozen=True, slots=True)
class Plumbing:
    """A node's shared plumbing, handed to each of its services."""

    node_name: str
    """The node's name (on the events it publishes, and in logs)."""
    config: Config
    store: Store
    hub: Hub
    metrics: Metrics
    tasks: Tasks


class Service:
    """A part of a node (the game feed, presence, results, leaderboards)."""

    def __init__(self, plumbing: Plumbing) -> None:
        self.node_name = plumbing.node_name
        self.config = plumbing.config
        self.store = plumbing.store
        self.hub = plumbing.hub
        self.metrics = plumbing.metrics
        self.tasks = plumbing.tasks
