"""A bot that plays legal moves by a simple heuristic, from its own view only.

The bot never sees a face-down card: it builds the local model of its view
(:func:`client.model.board_from_view`), whose legal moves and hint scores equal the real
board's, and picks a move with the shared hint heuristic (collect runs, turn cards face up,
empty columns, add same-suit links). To avoid pointless moves it remembers every position
it has seen and never plays into one again; it makes at most ``patience`` moves in a row
that score nothing. When nothing useful is left it deals the reserve, and when even that is
impossible it resigns (the server calls a board with no legal move at all ``stuck``).

Used by ``scorpion bot`` for demos and load, and by the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from protocol.game import Board, Move
from protocol.wire.message import Options, RaceEnded, RaceStarted

from .api import ScorpionClient
from .errors import ClientError, ConnectionLost, IllegalLocally, ServerError
from .model import best_moves, position_key

__all__ = ["Bot", "BotResult", "choose_move"]


@dataclass(slots=True)
class BotResult:
    """How a bot's race went."""

    game: str = ""
    moves: int = 0
    errors: list[str] = field(default_factory=list)
    status: str = ""
    score: int = 0
    rank: int = 0
    ended: RaceEnded | None = None


def choose_move(board: Board, seen: set[tuple[object, ...]], idle: int, patience: int = 30) -> Move | None:
    """Return the move the bot plays on ``board``, or ``None`` to resign.

    ``seen`` holds the positions already reached (never gone back to); ``idle`` counts the
    moves in a row that scored nothing.
    """
    deal: Move | None = None
    for move, value in best_moves(board):
        if move.is_deal:
            deal = move
            continue
        if value <= 0 and idle >= patience:
            continue
        board.push(move)
        key = position_key(board)
        board.pop()
        if key in seen:
            continue
        if value < 0:
            continue  # breaks a same-suit link for nothing
        return move
    return deal


class Bot:
    """Play one race on a connected :class:`ScorpionClient`."""

    def __init__(self, client: ScorpionClient, *, delay: float = 0.2, patience: int = 30) -> None:
        self.client = client
        self.delay = delay
        self.patience = patience
        self.result = BotResult()

    async def create_room(
        self, variant: str = "scorpion", players: int = 2, options: Options | None = None
    ) -> str:
        """Open a room and return its code (start it with :meth:`start_when_full`)."""
        room = await self.client.room_create(variant, players, options)
        return room.room

    async def start_when_full(self, players: int, timeout: float = 300.0) -> None:
        """As host, start the race once ``players`` players are ready."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            room = self.client.room
            if room is not None and len(room.players) >= players and all(p.ready for p in room.players):
                with contextlib.suppress(ServerError):
                    await self.client.room_start()
                    return
            await asyncio.sleep(0.1)
        raise TimeoutError("the room did not fill in time")

    async def join_room(self, code: str) -> None:
        """Join a room and say ready."""
        await self.client.room_join(code)
        await self.client.ready(True)

    async def play(self, timeout: float = 3600.0) -> BotResult:
        """Wait for the race to start, play it to its end and return the result."""
        client = self.client
        if client.race is None or client.race.ended is not None:
            await client.wait_for(RaceStarted, timeout=timeout)
        race = client.race
        assert race is not None
        self.result.game = race.game
        seen: set[tuple[object, ...]] = set()
        idle = 0
        while True:
            race = client.race
            if race is None or race.ended is not None or client.closed is not None:
                break
            if not race.playing:
                with contextlib.suppress(ClientError, TimeoutError):
                    await client.wait_for(RaceEnded, timeout=5.0, game=race.game)
                continue
            board = race.board()
            if board is None:
                await asyncio.sleep(0.05)
                continue
            board = board.copy(stack=False)
            seen.add(position_key(board))
            move = choose_move(board, seen, idle, self.patience)
            scored = dict(best_moves(board)) if move is not None else {}
            try:
                if move is None:
                    await client.resign()
                else:
                    await client.move(move)
                    self.result.moves += 1
                    idle = 0 if scored.get(move, 0) > 0 else idle + 1
            except (ConnectionLost, TimeoutError):
                await asyncio.sleep(0.2)  # the client reconnects and resumes; look again
            except IllegalLocally as exc:
                self.result.errors.append(f"local: {exc}")
                break
            except ServerError as exc:
                if exc.code == "rate_limited":
                    await asyncio.sleep(1.0)
                    continue
                if exc.code == "stale_version":
                    with contextlib.suppress(ClientError, TimeoutError):
                        await client.resume(race.game, race.v)
                    continue
                if exc.code == "game_over":
                    continue
                self.result.errors.append(f"{exc.code}: {exc.message}")
                break
            if self.delay:
                await asyncio.sleep(self.delay)
        race = client.race
        if race is not None:
            if race.ended is None and race.status != "playing":
                with contextlib.suppress(ClientError, TimeoutError):
                    await client.wait_for(RaceEnded, timeout=timeout, game=race.game)
            self.result.status = race.status
            self.result.score = int((race.summary or {}).get("score", 0))
            self.result.ended = race.ended
            if race.ended is not None:
                for standing in race.ended.standings:
                    if standing.player == client.player:
                        self.result.rank, self.result.score = standing.rank, standing.score
                        self.result.status = standing.status
        return self.result
