"""``scorpion-admin``: fair-play review and moderation, on the same Redis as the nodes.

Usage::

    scorpion-admin [--redis-url URL | --data-dir DIR] fairplay [--json]
    scorpion-admin ... ban PLAYER --reason TEXT [--by NAME]
    scorpion-admin ... unban PLAYER --reason TEXT [--by NAME]
    scorpion-admin ... dismiss PLAYER --reason TEXT [--by NAME]
    scorpion-admin ... log [--limit N] [--json]

Without ``--redis-url`` it talks to the embedded store of a running ``scorpion-server``
through the unix socket in its data directory (``--data-dir``, the server's default when
not given). ``PLAYER`` is a player id (that of ``player:ID``). Every ban and unban is
written to the moderation log with who (``--by``, the user running the command when not
given), when and why, as is every dismissal from the review queue. Exit codes: 0 done,
1 a store that cannot be reached, 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protocol.wire.message import MAX_BAN_REASON

from .config import Config
from .fairplay import ban, dismiss, unban
from .store import UNREACHABLE, Store

__all__ = ["main", "run"]

ACTIONS = {"ban": ban, "unban": unban, "dismiss": dismiss}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scorpion-admin", description="Fair-play review and moderation.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--redis-url", help="the Redis the nodes use (redis://, rediss://, unix://)")
    where.add_argument("--data-dir", type=Path, help="the data directory of a running embedded store")
    commands = parser.add_subparsers(dest="command", required=True)
    review = commands.add_parser("fairplay", help="list the review queue with each player's evidence")
    review.add_argument("--json", action="store_true", help="one JSON document")
    for name, text in (
        ("ban", "ban a player from ranked play"),
        ("unban", "lift a player's ban"),
        ("dismiss", "take a player off the review queue without a ban"),
    ):
        action = commands.add_parser(name, help=text)
        action.add_argument("player", help="the player's id")
        action.add_argument(
            "--reason", required=True, type=_reason, help="why (logged, and shown to the player on a ban)"
        )
        action.add_argument("--by", default=None, help="who acts (default: the user running this)")
        action.add_argument("--json", action="store_true", help="what was done, as JSON")
    log = commands.add_parser("log", help="list the moderation log, newest first")
    log.add_argument("--limit", type=int, default=50)
    log.add_argument("--json", action="store_true", help="one JSON document")
    return parser


def _reason(text: str) -> str:
    text = text.strip()
    if not text or len(text) > MAX_BAN_REASON:
        raise argparse.ArgumentTypeError(f"a reason of 1 to {MAX_BAN_REASON} characters")
    return text


def _url(args: argparse.Namespace) -> str:
    if args.redis_url:
        return str(args.redis_url)
    data_dir = args.data_dir or Config().data_dir
    socket = Path(data_dir) / "redis.sock"
    if not socket.exists():
        raise SystemExit(
            f"scorpion-admin: no running store in {data_dir} (no redis.sock): "
            "start scorpion-server there, or pass --redis-url"
        )
    return f"unix://{socket}"


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + " UTC"


async def _review(store: Store) -> list[dict[str, Any]]:
    queue = []
    for player, score in await store.review_queue():
        queue.append({"player": player, "score": score, "games": await store.fairplay_games(player)})
    return queue


def _print_review(queue: list[dict[str, Any]]) -> None:
    if not queue:
        print("the review queue is empty")
    for entry in queue:
        print(f"player {entry['player']}  score {entry['score']:.2f} over {len(entry['games'])} ranked games")
        for game in entry["games"]:
            solver, critical, digs, timing = game["solver"], game["critical"], game["digs"], game["timing"]
            print(
                f"  {game['mode']:<5} game {game['game']}  {_when(game['at'])}  score {game['score']:+.2f}:"
                f" solver's move {solver['hits']}/{solver['positions']} where the hint differs"
                f" (moves {solver['moves']}; leaves the hint {solver.get('leaves_hint', '?')} where they"
                f" agree), kept the win {critical['hits']}/{critical['positions']}"
                f" where the hint loses it (moves {critical['moves']}), best dig {digs['best']}/"
                f"{digs['choices']} (chance {digs['expected']}), move times cv {timing['cv']}"
                f" median {timing['median_ms']} ms{_prior_text(game.get('prior'))}"
            )
        print(f"  replay: scorpion replay GAME; ban: scorpion-admin ban {entry['player']} --reason ...")


def _prior_text(prior: dict[str, Any] | None) -> str:
    """Say how far a daily attempt followed another player's earlier game of the day."""
    if not prior or not prior.get("hits"):
        return ""
    return (
        f", the same choice as player {prior.get('player')}'s earlier game {prior.get('game')}"
        f" {prior['hits']}/{prior['positions']} where it left the hint (moves {prior['moves']};"
        f" score {prior['score']:+.2f} over {prior['compared']} games compared)"
    )


def _print_log(entries: list[dict[str, Any]]) -> None:
    if not entries:
        print("the moderation log is empty")
    for entry in entries:
        who = f"{entry['action']:<5} {entry['player']}  by {entry['by']}"
        line = f"{_when(entry['at'])}  {who}: {entry['reason']}"
        if entry["action"] == "ban":
            refunds = entry.get("refunds", [])
            points = sum(r["points"] for r in refunds)
            line += (
                f"  (off {len(entry.get('rating_boards', []))} rating and"
                f" {len(entry.get('daily_boards', []))} daily boards;"
                f" {len(refunds)} refunds, {points:g} points)"
            )
        print(line)


async def run(argv: Sequence[str]) -> int:
    """Run one ``scorpion-admin`` command; return its exit code."""
    args = _parser().parse_args(list(argv))
    store = Store(_url(args))
    try:
        if args.command == "fairplay":
            queue = await _review(store)
            print(json.dumps({"review": queue}, indent=2)) if args.json else _print_review(queue)
        elif args.command in ACTIONS:
            by = args.by or getpass.getuser()
            act = ACTIONS[args.command]
            done = await act(store, args.player, args.reason, by, int(time.time() * 1000))
            if args.json:
                print(json.dumps(done, indent=2))
            else:
                _print_log([done])
        else:
            entries = await store.moderation_log(max(1, args.limit))
            print(json.dumps({"log": entries}, indent=2)) if args.json else _print_log(entries)
    except UNREACHABLE as exc:
        print(f"scorpion-admin: the store cannot be reached: {exc}", file=sys.stderr)
        return 1
    finally:
        await store.close()
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """The ``scorpion-admin`` console script."""
    sys.exit(asyncio.run(run(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
