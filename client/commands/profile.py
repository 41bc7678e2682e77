"""``scorpion profile``: a player's ratings, statistics and recent games."""

from __future__ import annotations

import argparse

import msgspec

from protocol.game import VARIANTS
from protocol.wire.message import Profile, StatsInfo

from ..api import ScorpionClient
from .stats import format_stats
from .support.session import add_server_options, clock_text, run_session

__all__ = ["format_profile", "only_variant", "rating_text", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``profile`` subcommand."""
    parser = subparsers.add_parser("profile", help="print a player's ratings, statistics and recent games")
    parser.add_argument("player", nargs="?", default=None, help="a player id (default: you)")
    parser.add_argument("--variant", default=None, choices=sorted(VARIANTS), help="only this variant")
    add_server_options(parser)
    parser.set_defaults(handler=run)


def rating_text(rating: int, provisional: bool) -> str:
    """Return a rating as shown: ``1523``, or ``1523?`` while it is provisional."""
    return f"{rating}?" if provisional else str(rating)


def format_profile(profile: Profile) -> str:
    """Return a profile as text: ratings, statistics, then the recent games with their ids."""
    who = f"{profile.name} ({profile.player})" + (" · you" if profile.me else "")
    lines = [who, "", "ratings (? = provisional: too few recent rated races)"]
    if not profile.ratings:
        lines.append("  no rated races yet")
    for rating in profile.ratings:
        rank = f"#{rating.rank}" if rating.rank else "-"
        lines.append(
            f"  {rating.variant:<17} {rating_text(rating.rating, rating.provisional):>6}"
            f"  ±{rating.deviation:<4} {rating.games:>4} rated  rank {rank:<6} best {rating.best or '-'}"
        )
    lines += ["", "statistics", *("  " + line for line in format_stats_lines(profile))]
    lines += ["", "recent games (scorpion replay GAME to step through one)"]
    if not profile.recent:
        lines.append("  none kept")
    for game in profile.recent:
        when = clock_text(game.start, "%Y-%m-%d %H:%M")
        place = f"{game.rank}/{game.racers}" if game.racers > 1 else "solo"
        change = ""
        if game.change is not None:
            change = f"  rated {game.change:+d}"
        elif game.rated:
            change = "  rated"
        replay = "" if game.replayable else "  (replay once the day is over)"
        lines.append(
            f"  {game.game}  {when}  {game.variant:<17} {game.mode:<8} {place:<5} "
            f"{game.score:>5}  {game.status}{change}{replay}"
        )
    return "\n".join(lines)


def only_variant(profile: Profile, variant: str | None) -> Profile:
    """Return the profile with only one variant's ratings, statistics and games (all when ``None``)."""
    if variant is None:
        return profile
    return msgspec.structs.replace(
        profile,
        ratings=tuple(r for r in profile.ratings if r.variant == variant),
        stats=tuple(s for s in profile.stats if s.variant == variant),
        recent=tuple(g for g in profile.recent if g.variant == variant),
    )


def format_stats_lines(profile: Profile) -> list[str]:
    """Return the profile's statistics table, line by line."""
    return format_stats(StatsInfo(stats=profile.stats)).splitlines()


def run(args: argparse.Namespace) -> int:
    """Print the profile."""

    async def session(client: ScorpionClient) -> int:
        print(format_profile(only_variant(await client.profile(args.player), args.variant)))
        return 0

    return run_session(args, session, auto_resume=False)
