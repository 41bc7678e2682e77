"""The wire contract: messages, frames, error codes and the connection's state machine.

:mod:`protocol.wire.message` holds one frozen dataclass per message,
:mod:`protocol.wire.codec` turns them into msgpack or JSON frames and back,
:mod:`protocol.wire.error` the one error type and its codes, and :mod:`protocol.wire.flow`
which message is legal in which state. ``docs/protocol.md`` describes it for client authors.
"""
