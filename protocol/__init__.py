"""Pure core of Scorpion Race, in three parts.

- :mod:`protocol.game`: the rules engine (cards, deals, board, variants, scoring, views,
  notation).
- :mod:`protocol.wire`: the wire contract (messages, codecs, error codes, the connection's
  state machine); ``docs/protocol.md`` describes it.
- :mod:`protocol.solver`: the full-information solver and its search; ``docs/solver.md``.

Nothing in this package performs I/O, reads a clock or draws randomness of its own; the
server and the clients wrap it. The wire contract's most used names are re-exported here.
"""

from .wire.codec import (
    JSON,
    MAX_CLIENT_FRAME,
    MAX_SERVER_FRAME,
    MSGPACK,
    PROTOCOL_VERSION,
    SUBPROTOCOLS,
    decode,
    encode,
    from_dict,
    to_dict,
)
from .wire.error import ErrorCode, ProtocolError
from .wire.flow import Flow, State
from .wire.message import MESSAGES, Message, error_message

__all__ = [
    "JSON",
    "MAX_CLIENT_FRAME",
    "MAX_SERVER_FRAME",
    "MESSAGES",
    "MSGPACK",
    "PROTOCOL_VERSION",
    "SUBPROTOCOLS",
    "ErrorCode",
    "Flow",
    "Message",
    "ProtocolError",
    "State",
    "decode",
    "encode",
    "error_message",
    "from_dict",
    "to_dict",
]
