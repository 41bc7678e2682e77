"""Who the player is: hello, ping, statistics, and forget-me."""

from __future__ import annotations

from protocol.game import VARIANTS
from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL

from ..game.live import now_ms
from ..node import Node
from ..profile import variant_stats
from ..session import Session

__all__ = ["on_forget_me", "on_hello", "on_ping", "on_stats"]


async def on_hello(node: Node, session: Session, message: m.Hello) -> None:
    """Name the connection's player: a new one, or the one a token stands for.

    A player is kept ``guest_retention`` after their last hello: a new one's keys get that
    expiry, a returning one's are renewed here, once a connection (hello is its first
    message only), and again when their last connection closes (``Presence.leave``).
    """
    retention = int(node.config.guest_retention * 1000)
    if message.token:
        found = await node.store.player_by_token(message.token)
        if found is None:
            raise ProtocolError(
                ErrorCode.BAD_TOKEN, "that token is unknown: say hello without it to start anew"
            )
        player, name = found
        token = message.token
        if name != message.name:
            await node.store.rename_player(player, message.name)
        await node.store.keep_player(player, retention, list(VARIANTS))
    else:
        player, token = await node.store.create_player(message.name, now_ms(), retention)
    session.player, session.name = player, message.name
    await node.presence.arrive(session, player)
    places = await node.store.player_places(player)
    games: tuple[str, ...] = ()
    if "game" in places:
        game = await node.race.load(places["game"])
        if game is not None and not game.ended:
            games = (game.game_id,)
    session.send(
        m.Welcome(player=player, token=token, name=message.name, now=now_ms(), games=games, ref=message.ref)
    )


async def on_ping(node: Node, session: Session, message: m.Ping) -> None:
    """Answer with the server's clock."""
    session.send(m.Pong(now=now_ms(), ref=message.ref))


async def on_stats(node: Node, session: Session, message: m.Stats) -> None:
    """Send the player's statistics, for one variant or all."""
    assert session.player is not None
    variants = [message.variant] if message.variant else list(VARIANTS)
    stats = await node.store.stats(session.player, variants)
    rows = [variant_stats(variant, raw) for variant, raw in stats.items()]
    session.send(m.StatsInfo(stats=tuple(rows), ref=message.ref))


async def on_forget_me(node: Node, session: Session, message: m.ForgetMe) -> None:
    """Remove everything kept of the player, then close all their connections."""
    assert session.player is not None
    player = session.player
    places = await node.store.player_places(player)
    if "game" in places and places["game"] not in await node.store.saved_games(player):
        await node.race.mark_left(places["game"], player)  # rivals see them leave
    await node.store.leave_queues(session.queued or "scorpion", player, now_ms(), 0)
    removed = await node.store.forget_player(player, list(VARIANTS))
    removed["ratings"] = await node.store.forget_ratings(player, list(VARIANTS))
    session.send(m.Forgotten(removed=removed, ref=message.ref))
    for peer in list(node.presence.by_player.get(player, ())):
        peer.forgotten = True
        peer.closing = True
        node.spawn(peer.close_after_flush(CLOSE_NORMAL, "forgotten"))
