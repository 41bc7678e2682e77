"""Pure core of Scorpion Race: the rules engine and the wire contract.

Nothing in this package performs I/O, reads a clock or draws randomness of its own;
the server and the clients wrap it. The wire contract lives in :mod:`protocol.message`
(the messages), :mod:`protocol.codec` (frames), :mod:`protocol.error` (the one error type)
and :mod:`protocol.flow` (which message is legal when); docs/protocol.md describes it.
"""

from .codec import (
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
from .error import ErrorCode, ProtocolError
from .flow import Flow, State
from .message import MESSAGES, Message, error_message

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
