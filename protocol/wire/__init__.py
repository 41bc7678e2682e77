"""The wire contract: messages, frames, error codes and the connection's state machine.

:mod:`protocol.wire.message` holds one frozen msgspec ``Struct`` per message and the registry
of them, and is the one module to import them from: it gathers :mod:`~protocol.wire.fields`
(limits and field types), :mod:`~protocol.wire.base` (the bases and the decode adapter),
:mod:`~protocol.wire.records` (nested records) and the messages by feature
(:mod:`~protocol.wire.race`, :mod:`~protocol.wire.spectate`, :mod:`~protocol.wire.player`).
:mod:`protocol.wire.codec` turns messages into msgpack or JSON frames and back,
:mod:`protocol.wire.error` the one error type and its codes, and :mod:`protocol.wire.flow`
which message is legal in which state. ``docs/protocol.md`` describes it for client authors.
"""
