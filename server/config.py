"""Server configuration: command-line flags, each also settable by environment variable.

Configuration is kept apart from running (as uvicorn does): :class:`Config` is a plain
frozen value built by :func:`load_config`; nothing here opens a socket.
"""

from __future__ import annotations

import argparse
import math
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path

import platformdirs

from protocol.wire.codec import MAX_CLIENT_FRAME
from protocol.wire.flow import PLAYER_CREDITS, SPECTATOR_CREDITS, STRIKES_BEFORE_CLOSE

from .runtime.proxy import TrustedProxies

__all__ = ["Config", "build_parser", "load_config"]


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting of one server process."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None
    redis_wait_replicas: int = 0
    data_dir: Path = Path(platformdirs.user_data_dir("scorpion-race"))
    log_level: str = "info"
    log_format: str = "json"
    node_id: str = ""
    countdown_seconds: float = 3.0
    race_time_limit: float = 1800.0
    grace_period: float = 60.0
    queue_timeout: float = 120.0
    quick_match_size: int = 2
    match_interval: float = 0.5
    match_window: float = 50.0
    match_widening: float = 25.0
    match_max_wait: float = 30.0
    rated_pair_limit: int = 10
    message_credits: int = PLAYER_CREDITS[0]
    credit_window: float = PLAYER_CREDITS[1]
    spectator_credits: int = SPECTATOR_CREDITS[0]
    rate_limit_strikes: int = STRIKES_BEFORE_CLOSE
    max_frame: int = MAX_CLIENT_FRAME
    send_queue: int = 64
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    shutdown_timeout: float = 5.0
    close_timeout: float = 2.0
    finished_game_ttl: float = 7 * 24 * 3600.0
    room_ttl: float = 3600.0
    challenge_ttl: float = 7 * 24 * 3600.0
    guest_retention: float = 30 * 24 * 3600.0
    account_retention: float = 730 * 24 * 3600.0
    session_idle: float = 30 * 24 * 3600.0
    session_rotation: float = 3600.0
    session_overlap: float = 60.0
    username_hold: float = 30 * 24 * 3600.0
    account_login_failures: int = 5
    account_login_lockout: float = 2.0
    passkey_rp_id: str = ""
    leaderboard_days: int = 30
    spectator_tick: float = 2.0
    spectator_lag: float = 0.005
    node_heartbeat: float = 5.0
    node_timeout: float = 30.0
    daily_secret: str = ""
    test_deals: str = ""
    web_dir: Path | None = None
    allowed_origins: str = ""
    trusted_proxies: str = ""
    guests_per_minute: int = 30
    accounts_per_day: int = 5
    room_codes_per_minute: int = 10
    logins_per_minute: int = 20
    login_failures: int = 5
    login_lockout: float = 60.0
    login_lockout_max: float = 3600.0
    event_loop: str = "auto"
    workers: int = 1
    reuse_port: bool = False


_HELP = {
    "host": "address to listen on (loopback by default)",
    "port": "TCP port for websockets and HTTP",
    "redis_url": (
        "Redis URL (redis://, rediss://, unix://, or a cluster: redis+cluster://host:port,host:port); "
        "without it a private embedded server is started"
    ),
    "redis_wait_replicas": (
        "replicas that must have a racer's action before it is acknowledged (WAIT); 0: the "
        "primary's acceptance is enough"
    ),
    "data_dir": "directory for the embedded server's append-only file",
    "log_level": "debug, info, warning or error",
    "log_format": "json (structured) or text",
    "node_id": "name of this node in logs and metrics (default: host:port)",
    "countdown_seconds": "countdown before a friend race starts",
    "race_time_limit": "seconds after which a race ends",
    "grace_period": "seconds a disconnected racer may take to come back",
    "queue_timeout": "seconds a quick-match player waits before being told",
    "quick_match_size": "players per quick-match race",
    "match_interval": "seconds between the rated queue's matching rounds",
    "match_window": "rating points either side of a player's rating that a rated match may span at first",
    "match_widening": "rating points the window widens by each second a player waits",
    "match_max_wait": "seconds after which a rated waiter is matched with anyone waiting",
    "rated_pair_limit": "rated races two players may play against each other in a day (UTC)",
    "message_credits": "messages a player may send per credit window",
    "credit_window": "length of the credit window in seconds",
    "spectator_credits": "messages a spectator may send per credit window",
    "rate_limit_strikes": "rate-limited messages tolerated before closing with 1008",
    "max_frame": "largest accepted frame in bytes",
    "send_queue": "outgoing messages buffered per connection before it is resynced",
    "ping_interval": "seconds between keepalive pings",
    "ping_timeout": "seconds to wait for a pong",
    "shutdown_timeout": "seconds to wait for connections to close on shutdown",
    "close_timeout": "seconds to wait for a client's closing handshake before dropping it",
    "finished_game_ttl": "seconds finished games are kept for replays",
    "room_ttl": "seconds an idle room is kept",
    "challenge_ttl": "seconds a challenge (its deal, ghosts and board) is kept after it is made",
    "guest_retention": (
        "seconds a player's identity, token, statistics, saved games and results are kept after "
        "their last visit (each hello and each last disconnect renews them)"
    ),
    "account_retention": (
        "seconds an account (its identity, username, statistics, saved games, results and "
        "ratings) is kept after its last visit"
    ),
    "session_idle": "seconds an account's session token stays valid unused (each hello renews it)",
    "session_rotation": (
        "seconds after which a session token presented in hello is replaced by a new one (at "
        "most one rotation a session per period; 0: at every hello)"
    ),
    "session_overlap": (
        "seconds a rotated session token keeps working, for a reconnect that raced the rotation"
    ),
    "username_hold": "seconds the username of a forgotten account stays reserved (for nobody)",
    "account_login_failures": "wrong passwords in a row an account takes before its logins are locked out",
    "account_login_lockout": (
        "seconds of the first lockout after account-login-failures wrong passwords; each further wrong "
        "password doubles it (at most a day)"
    ),
    "passkey_rp_id": (
        "relying party id of passkeys: this site's domain (e.g. example.com), the same on every "
        "node; default: the host name of the page that opened the websocket"
    ),
    "leaderboard_days": "days past leaderboards and daily attempts are kept",
    "spectator_tick": "seconds between batched spectator-count updates",
    "node_heartbeat": "seconds between this node's heartbeats in Redis",
    "node_timeout": (
        "seconds without a heartbeat after which a node counts as dead: its players' "
        "connections are dropped and their grace period starts on the other nodes"
    ),
    "spectator_lag": (
        "seconds a node waits before writing another node's event to its spectators, so that "
        "the racer's answer on the other node goes first when both share a machine"
    ),
    "daily_secret": "secret the daily deals derive from (default: one generated and kept in Redis)",
    "web_dir": "directory of the browser client served at / (default: the installed client/web)",
    "allowed_origins": (
        "comma-separated origins (scheme://host:port) whose pages may open a websocket besides "
        "this server's own pages; * allows any"
    ),
    "trusted_proxies": (
        "comma-separated networks (CIDR, e.g. 10.0.0.0/8) of the balancers whose PROXY protocol "
        "header or X-Forwarded-For names the client; from any other peer both are ignored "
        "(none by default: the socket's peer is the client)"
    ),
    "guests_per_minute": "new guests (hello without a token) one client address may make in a minute",
    "accounts_per_day": "new accounts one client address may open in a day",
    "room_codes_per_minute": (
        "room codes naming no open room one client address may try in a minute (joining or "
        "watching by code); past it, rate_limited"
    ),
    "logins_per_minute": (
        "logins (right or wrong, password or passkey) one client address may try in a minute"
    ),
    "login_failures": "failed logins from one client address before it is locked out",
    "login_lockout": "seconds of the first lockout after failed logins; each next one lasts twice as long",
    "login_lockout_max": "longest lockout after failed logins, in seconds",
    "event_loop": "auto (uvloop where it is installed, else asyncio's own), uvloop or asyncio",
    "workers": (
        "node processes sharing the port, under one supervising process (auto: one per core); "
        "1 runs the node in this process"
    ),
    "reuse_port": (
        "listen with SO_REUSEPORT, so that other processes that do may share the port (the kernel "
        "spreads connections among them); --workers sets it for its workers"
    ),
    "test_deals": (
        "comma-separated deal numbers used in turn (the last repeats) instead of secret ones: "
        "tests and demos only"
    ),
}


LOG_LEVELS = ("debug", "info", "warning", "error")
EVENT_LOOPS = ("auto", "uvloop", "asyncio")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
_NON_NEGATIVE = frozenset(
    {
        "redis_wait_replicas",
        "countdown_seconds",
        "grace_period",
        "shutdown_timeout",
        "close_timeout",
        "spectator_lag",
        "session_rotation",
    }
)
"""Numeric settings that may be 0; every other one must be above 0 (the port aside)."""


def _env_name(name: str) -> str:
    return "SCORPION_" + name.upper()


def build_parser() -> argparse.ArgumentParser:
    """Return the ``scorpion-server`` argument parser (defaults come from the environment)."""
    parser = argparse.ArgumentParser(
        prog="scorpion-server",
        description="Scorpion Race server. Every flag can also be set as SCORPION_<FLAG> in the environment.",
    )
    try:
        version = metadata.version("scorpion-race")
    except metadata.PackageNotFoundError:
        version = "unknown"
    parser.add_argument("--version", action="version", version=f"scorpion-server {version}")
    for item in fields(Config):
        flag = "--" + item.name.replace("_", "-")
        parser.add_argument(
            flag, dest=item.name, default=None, help=f"{_HELP[item.name]} ({_env_name(item.name)})"
        )
    return parser


def _convert(name: str, raw: str, default: object) -> object:
    if name == "redis_url":
        return raw or None
    if name == "workers" and raw.strip().lower() == "auto":
        return os.cpu_count() or 1
    if isinstance(default, bool):
        return raw.lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, Path) or name.endswith("_dir"):
        return Path(raw).expanduser()
    return raw


def load_config(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Build the configuration from flags, then environment variables, then defaults."""
    env = os.environ if environ is None else environ
    args = build_parser().parse_args(argv)
    defaults = Config()
    values: dict[str, object] = {}
    for item in fields(Config):
        raw = getattr(args, item.name)
        if raw is None:
            raw = env.get(_env_name(item.name))
        if raw is None:
            continue
        try:
            values[item.name] = _convert(item.name, raw, getattr(defaults, item.name))
        except ValueError:
            raise SystemExit(f"scorpion-server: {item.name.replace('_', '-')} cannot be {raw!r}") from None
    config = Config(**values)  # type: ignore[arg-type]
    problem = _problem(config)
    if problem:
        raise SystemExit(f"scorpion-server: {problem}")
    return config


def _problem(config: Config) -> str | None:
    """Say what is wrong with ``config`` (flag names as on the command line), if anything."""
    if config.log_format not in ("json", "text"):
        return f"log-format is json or text, not {config.log_format!r}"
    if config.event_loop not in EVENT_LOOPS:
        return f"event-loop is one of {', '.join(EVENT_LOOPS)}, not {config.event_loop!r}"
    if config.log_level.lower() not in LOG_LEVELS:
        return f"log-level is one of {', '.join(LOG_LEVELS)}, not {config.log_level!r}"
    if not 2 <= config.quick_match_size <= 8:
        return "quick-match-size is 2 to 8"
    if not 0 <= config.port <= 65535:
        return f"port is 0 to 65535 (0: any free port), not {config.port}"
    if config.redis_url is not None and not config.redis_url.startswith(REDIS_SCHEMES):
        return f"redis-url must start with {', '.join(REDIS_SCHEMES)}: {config.redis_url!r}"
    if config.redis_url is not None and "+cluster://" in config.redis_url:
        from .store.cluster import parse_cluster_url

        try:
            parse_cluster_url(config.redis_url)
        except ValueError as exc:
            return f"redis-url: {exc}"
    if config.redis_wait_replicas and config.redis_url is None:
        return "redis-wait-replicas needs a redis-url: the embedded server has no replicas"
    try:
        TrustedProxies.parse(config.trusted_proxies)
    except ValueError as exc:
        return f"trusted-proxies: {exc}"
    if config.login_lockout_max < config.login_lockout:
        return "login-lockout-max must be at least login-lockout"
    if (config.workers > 1 or config.reuse_port) and not hasattr(socket, "SO_REUSEPORT"):
        return "workers above 1 and reuse-port need SO_REUSEPORT, which this platform lacks"
    for item in fields(Config):
        value = getattr(config, item.name)
        if item.name in ("port", "quick_match_size") or type(value) not in (int, float):
            continue
        flag = item.name.replace("_", "-")
        if not math.isfinite(value):
            return f"{flag} must be a finite number, not {value}"
        if item.name in _NON_NEGATIVE and value < 0:
            return f"{flag} must be 0 or more, not {value:g}"
        if item.name not in _NON_NEGATIVE and value <= 0:
            return f"{flag} must be more than 0, not {value:g}"
    return None
