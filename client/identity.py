"""Where the client keeps the player's identity (the secret token) and its settings between runs.

The server to use when a command is given no ``--server``: ``$SCORPION_SERVER`` (URLs
separated by spaces or commas, the first preferred, the others fallbacks), else the
``server`` of ``config.json`` in the config directory (a URL or a list of them), else
``None`` (the command's default). See :func:`configured_servers`.

The identity: one JSON file in the user's config directory (``platformdirs``), or in
``$SCORPION_CONFIG_DIR`` when that is set, holding one identity per server URL: a token is
issued by a server and means nothing to another. The file is created readable by its owner
only, since the token is a secret.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

__all__ = ["Identity", "TokenStore", "config_dir", "configured_servers"]

APP_NAME = "scorpion-race"


def config_dir() -> Path:
    """Return the directory of the client's configuration."""
    override = os.environ.get("SCORPION_CONFIG_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME))


def configured_servers() -> tuple[list[str], str] | None:
    """Return the servers configured outside the command line, and where they were read.

    ``$SCORPION_SERVER`` first, then the ``server`` entry of ``config.json`` in
    :func:`config_dir`; ``None`` when neither gives one (or the file cannot be read).
    """
    text = os.environ.get("SCORPION_SERVER", "").replace(",", " ").split()
    if text:
        return text, "SCORPION_SERVER"
    path = config_dir() / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    server = data.get("server") if isinstance(data, dict) else None
    urls = [server] if isinstance(server, str) else server if isinstance(server, list) else []
    urls = [url for url in urls if isinstance(url, str) and url.strip()]
    return (urls, str(path)) if urls else None


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the player is on one server."""

    token: str
    name: str
    player: str = ""


class TokenStore:
    """Load and save identities, keyed by server URL, in one JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / "identity.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        with open(
            os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8"
        ) as f:
            json.dump(data, f, indent=2, sort_keys=True)
        os.replace(temporary, self.path)

    def load(self, server: str) -> Identity | None:
        """Return the identity stored for ``server``, if any."""
        entry = self._read().get(_key(server))
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        return Identity(
            token=entry["token"], name=str(entry.get("name", "")), player=str(entry.get("player", ""))
        )

    def save(self, server: str, identity: Identity) -> None:
        """Store ``identity`` for ``server`` (replacing the previous one)."""
        data = self._read()
        data[_key(server)] = {"token": identity.token, "name": identity.name, "player": identity.player}
        self._write(data)

    def forget(self, server: str) -> None:
        """Remove the identity stored for ``server``."""
        data = self._read()
        if data.pop(_key(server), None) is not None:
            self._write(data)
        if not data:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _key(server: str) -> str:
    return server.rstrip("/") + "/"
