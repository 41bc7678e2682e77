"""Print how fast the wire codecs encode and decode a move request and its answer.

Run: python bench/codec.py  (prints figures; asserts nothing)
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.game import Board, move_from_text, player_view, summarize
from protocol.wire.codec import JSON, MAX_SERVER_FRAME, MSGPACK, decode, encode
from protocol.wire.message import Accepted, Message, PlayMove, WireMove

ROUNDS = 5


def per_second(message: Message, fmt: str, count: int) -> tuple[float, float, float]:
    """Return encodes/s, decodes/s and round trips/s of ``message`` (best of a few rounds)."""
    frame = encode(message, fmt)  # type: ignore[arg-type]
    best_enc = best_dec = best_both = float("inf")
    for _ in range(ROUNDS):
        began = time.perf_counter()
        for _ in range(count):
            encode(message, fmt)  # type: ignore[arg-type]
        best_enc = min(best_enc, time.perf_counter() - began)
        began = time.perf_counter()
        for _ in range(count):
            decode(frame, fmt, limit=MAX_SERVER_FRAME)  # type: ignore[arg-type]
        best_dec = min(best_dec, time.perf_counter() - began)
        began = time.perf_counter()
        for _ in range(count):
            decode(encode(message, fmt), fmt, limit=MAX_SERVER_FRAME)  # type: ignore[arg-type]
        best_both = min(best_both, time.perf_counter() - began)
    return count / best_enc, count / best_dec, count / best_both


def main() -> None:
    """Print the figures."""
    board = Board.new("scorpion", 1)
    move = move_from_text("7D:5-1")
    request = PlayMove(game="G7K2M9QX", v=42, move=WireMove.of(move), ref=12)
    board.play(move)
    answer = Accepted(
        game="G7K2M9QX",
        v=43,
        view=player_view(board).as_dict(),
        summary=summarize(board, 95).as_dict(),
        ref=12,
    )
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'message':<22}{'codec':<9}{'bytes':>7}{'encode/s':>12}{'decode/s':>12}{'round trip/s':>14}")
    for name, message, count in (("move request", request, 20_000), ("accepted (view+sum)", answer, 5_000)):
        for fmt, label in ((MSGPACK, "msgpack"), (JSON, "json")):
            size = len(encode(message, fmt))
            if fmt == JSON:
                size = len(str(encode(message, fmt)).encode("utf-8"))
            enc, dec, both = per_second(message, fmt, count)
            print(f"{name:<22}{label:<9}{size:>7}{enc:>12,.0f}{dec:>12,.0f}{both:>14,.0f}")
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
