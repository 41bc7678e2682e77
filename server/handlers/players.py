"""Who the player is: hello, ping, statistics, and forget-me."""

from __future__ import annotations

from protocol.game import VARIANTS
from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL

from ..game.live import LiveGame, now_ms
from ..node import Node
from ..profile import variant_stats
from ..rooms import leave_room, publish_room
from ..session import Session
from ..store.keys import FORGOTTEN_NAME

__all__ = ["device_of", "on_forget_me", "on_hello", "on_ping", "on_stats"]


async def on_hello(node: Node, session: Session, message: m.Hello) -> None:
    """Name the connection's player: a new guest, or the one a session token stands for.

    New guests are limited per client address (``guest``: ``rate_limited`` past it).

    A token presented is replaced by a new one when its rotation is due (the welcome carries
    it). A player is kept ``guest_retention`` (an account ``account_retention``) after their
    last hello: a new one's keys get that expiry, a returning one's are renewed here, once
    a connection (hello is its first message only), and again when their last connection
    closes (``Presence.leave``).
    """
    accounts = node.accounts
    if message.token:
        record, token, known = await accounts.resume(message.token)
        player, sid, username = record["player"], record["sid"], known.get("username")
        if known["name"] != message.name:
            await node.store.rename_player(player, message.name)
        account_ttl = accounts.retention_ms(True)
        await node.store.keep_player(player, accounts.retention_ms(False), list(VARIANTS), account_ttl)
    else:
        await node.limits.take(session.address, "guest")
        player = await node.store.create_player(message.name, now_ms(), accounts.retention_ms(False))
        token, sid = await accounts.open(player, device_of(session, message.client), account=False)
        username = None
    session.player, session.name, session.username, session.login = player, message.name, username, sid
    await node.presence.arrive(session, player)
    places = await node.store.player_places(player)
    games: tuple[str, ...] = ()
    if "game" in places:
        game = await node.race.load(places["game"])
        if game is not None and not game.ended:
            games = (game.game_id,)
    ban = await node.store.banned(player)
    banned = str(ban.get("reason") or "no reason given")[: m.MAX_BAN_REASON] if ban is not None else None
    welcome = m.Welcome(
        player=player,
        token=token,
        name=message.name,
        now=now_ms(),
        games=games,
        username=username,
        session=sid,
        banned=banned,
        ref=message.ref,
    )
    session.send(welcome)


def device_of(session: Session, client: str | None) -> str:
    """Return what a session's device is called: the client's own word, else its User-Agent."""
    if client:
        return client[:64]
    request = getattr(session.ws, "request", None)
    agent = request.headers.get("User-Agent", "") if request is not None else ""
    return str(agent)[:64] or "unknown"


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
    """Remove everything kept of the player, then close all their connections.

    In a game in progress (a race, a daily attempt) the player's seat is first marked
    forgotten under the neutral name, then they resign, then everything else goes: what
    the game's end writes later shows the neutral name and leaves nothing of them
    (decision 15). Saved solo games are deleted whole.
    """
    assert session.player is not None
    player = session.player
    saved = set(await node.store.saved_games(player))
    places = await node.store.player_places(player)
    followed = {game for peer in node.presence.by_player.get(player, ()) for game in peer.games}
    followed |= {places["game"]} if "game" in places else set()
    racing: list[LiveGame] = []
    for game_id in sorted(followed - saved):
        game = await node.race.load(game_id)
        if game is not None and not game.ended and player in game.status:
            racing.append(game)
    await node.store.leave_queues(session.queued or "scorpion", player, now_ms(), 0)
    for peer in list(node.presence.by_player.get(player, ())):
        await leave_room(node.store, peer)  # the members who stay see them leave
    if "room" in places and await node.store.leave_room(places["room"], player) == "ok":
        await publish_room(node.store, places["room"])  # a room joined on another node
    await node.store.forget_seats(player, [game.game_id for game in racing])
    for game in racing:
        game.roster = [(pid, FORGOTTEN_NAME if pid == player else name) for pid, name in game.roster]
        await _resign(node, game, player)  # rivals see them resign; the race goes on or ends
    # The day's ranked attempt stays used for an account made again from here today.
    await node.daily.remember_forgotten(player, session.address, VARIANTS)
    days = [(game.daily, game.variant) for game in racing if game.daily]
    daily_attempts = await node.store.forget_daily_attempts(player, days)
    hold = int(node.config.username_hold * 1000)
    removed = await node.store.forget_player(player, list(VARIANTS), hold)
    removed["ratings"] = await node.store.forget_ratings(player, list(VARIANTS))
    removed["daily_attempts"] = daily_attempts
    session.send(m.Forgotten(removed=removed, ref=message.ref))
    for peer in list(node.presence.by_player.get(player, ())):
        peer.forgotten = True
        peer.closing = True
        node.spawn(peer.close_after_flush(CLOSE_NORMAL, "forgotten"))


async def _resign(node: Node, game: LiveGame, player: str) -> None:
    """Resign a racer still playing, as their own resign would; marked as left if their
    board keeps changing under the request."""
    for _attempt in range(3):
        if game.ended or game.status.get(player) != "playing":
            return
        try:
            await node.race.act(player, m.Resign(game=game.game_id, v=game.changed[player]))
            return
        except ProtocolError as exc:
            if exc.code != ErrorCode.STALE_VERSION:
                break
    await node.race.mark_left(game.game_id, player)
