"""A fuzz campaign against the decoder: at least 100,000 hostile frames, only ProtocolError comes out."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pytest

from protocol.game.move import Move
from protocol.wire.codec import JSON, MAX_CLIENT_FRAME, MSGPACK, Format, decode, encode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    MESSAGES,
    Hello,
    HintRequest,
    Message,
    PlayMove,
    Ready,
    Resume,
    RoomCreate,
    RoomJoin,
    Watch,
    WireMove,
)

CAMPAIGN = 120_000
SEED = 20_240_601

SEEDS: list[Message] = [
    Hello(name="Ann", token="a" * 20, client="cli 1.0", ref=1),
    RoomCreate(variant="three-blind-mice", max_players=4, ref="r"),
    RoomJoin(room="ABCDEF"),
    Ready(ready=True, ref=2),
    PlayMove(game="G7K2M9QX", v=42, move=WireMove.of(Move(32, 1, 4)), ref=12),
    PlayMove(game="G7K2M9QX", v=43, move=WireMove.of(Move(51, 101, 9))),
    HintRequest(game="G7K2M9QX", v=44),
    Resume(game="G7K2M9QX", v=40),
    Watch(room="ABCDEF"),
]
FIELD_NAMES = sorted(
    {"type", "ref", "move", "card", "from", "to", "deal", "options", "events", "standings"}
    | {f for cls in MESSAGES.values() for f in cls.__struct_encode_fields__}
)
TYPES = [*sorted(MESSAGES), "leaderboard", "", "x" * 70]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """Return a random plain value, nested at most a few levels."""
    roll = rng.random()
    if roll < 0.15:
        return rng.choice([None, True, False, 0, -1, 2**31, 2**63, -(2**63), 1.5])
    if roll < 0.35:
        return rng.randint(-(2**40), 2**40) if rng.random() < 0.3 else rng.randint(-3, 70)
    if roll < 0.6:
        return "".join(rng.choice("aZ7 R-_\u00e9\u0000\n🦂HDSC") for _ in range(rng.randint(0, 30)))
    if roll < 0.65:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 8)))
    if depth >= 3:
        return None
    if roll < 0.8:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(FIELD_NAMES): random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def random_message_map(rng: random.Random) -> dict[Any, Any]:
    """Return a map that looks like a message: a known type and known field names, random values."""
    data: dict[Any, Any] = {"type": rng.choice(TYPES)}
    for _ in range(rng.randint(0, 7)):
        data[rng.choice(FIELD_NAMES)] = random_value(rng)
    if rng.random() < 0.05:
        data[rng.choice([1, b"k", 2.5])] = 1
    return data


def pack(data: Any, fmt: Format) -> bytes | str:
    """Return a frame holding ``data`` (JSON can only hold JSON-able data; others go through repr)."""
    if fmt == MSGPACK:
        return msgpack.packb(data, use_bin_type=True, strict_types=False)  # type: ignore[no-any-return]
    return json.dumps(data, default=repr, skipkeys=True)


def mutate(frame: bytes, rng: random.Random) -> bytes:
    """Return ``frame`` with a few bytes flipped, cut, repeated or inserted."""
    data = bytearray(frame)
    for _ in range(rng.randint(1, 4)):
        action = rng.randrange(4)
        at = rng.randrange(len(data) + 1)
        if action == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif action == 1:
            del data[at : at + rng.randint(1, 8)]
        elif action == 2:
            data[at:at] = data[at : at + rng.randint(1, 16)] * rng.randint(1, 3)
        else:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    return bytes(data)


def inputs(rng: random.Random) -> Iterator[tuple[bytes | str, Format]]:
    """Yield the campaign's frames, a mix of five families."""
    msgpack_seeds = [encode(m, MSGPACK) for m in SEEDS]
    json_seeds = [str(encode(m, JSON)) for m in SEEDS]
    families: list[Callable[[], tuple[bytes | str, Format]]] = [
        lambda: (bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))), MSGPACK),
        lambda: (mutate(bytes(rng.choice(msgpack_seeds)), rng), MSGPACK),
        lambda: (mutate(rng.choice(json_seeds).encode(), rng).decode("utf-8", "replace"), JSON),
        lambda: (pack(random_message_map(rng), MSGPACK), MSGPACK),
        lambda: (pack(random_message_map(rng), JSON), JSON),
    ]
    for i in range(CAMPAIGN):
        yield families[i % len(families)]()


@pytest.mark.slow
def test_a_campaign_of_120000_hostile_frames_only_ever_raises_the_protocol_error() -> None:
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    began = time.perf_counter()
    for frame, fmt in inputs(rng):
        try:
            message = decode(frame, fmt)
        except ProtocolError as exc:
            assert isinstance(exc.code, ErrorCode)
            assert exc.message
            outcomes[exc.code.value] += 1
        else:
            outcomes["decoded"] += 1
            assert len(encode(message, fmt)) <= 2 * MAX_CLIENT_FRAME  # what decodes encodes again
    assert sum(outcomes.values()) == CAMPAIGN
    # the campaign reaches deep into the decoder, not only its front door
    for code in ("bad_frame", "bad_field", "unknown_type", "decoded"):
        assert outcomes[code] > 100, outcomes
    assert time.perf_counter() - began < 100
