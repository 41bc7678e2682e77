"""Every client message's handler, one module per feature, in one table.

Each module ends with its own ``HANDLERS`` (message type -> handler); this table joins
them. A new message type gets its handler in the module of its feature and its row there.
"""

from __future__ import annotations

from protocol.wire.message import Message

from ..node import Handler
from . import account, analysis, daily, racing, rematch, rooms, solo, spectate

__all__ = ["HANDLERS"]

_FEATURES = (account, rooms, rematch, racing, solo, daily, analysis, spectate)


def _join() -> dict[type[Message], Handler]:
    table: dict[type[Message], Handler] = {}
    for feature in _FEATURES:
        for kind, handler in feature.HANDLERS.items():
            if kind in table:
                raise RuntimeError(f"{kind.__name__} has two handlers ({feature.__name__} and another)")
            table[kind] = handler
    return table


HANDLERS: dict[type[Message], Handler] = _join()
"""Message type -> the handler that serves it."""
