"""Passkeys (WebAuthn): make an account with a passkey, add one to an account, log in with one.

Each ceremony has two steps on one connection: ``passkey_options`` hands out a challenge
(kept on the connection, good once for two minutes) in WebAuthn's options; the browser's
answer (``passkey_register``, ``passkey_login``) is verified against it. The relying party
is this site: ``--passkey-rp-id`` where set, else the host name of the page that opened the
websocket; the origin expected is that page's (the handshake has already checked it is this
server's own or an allowed one). A client that is no browser sends no origin and cannot use
passkeys: it logs in with a password.

The WebAuthn checks themselves (client data, the relying party's hash, the user-present and
user-verified flags, COSE public keys, signatures, attestation formats) are done by the
``webauthn`` library (py_webauthn): security code that is better kept by people who follow
the specification than written again here. Passkeys are discoverable credentials, so a login
names no username: the passkey's user handle is the player id, and the credential must be
one stored for that player. Only public keys are stored (``passkeys:PLAYER``).
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import webauthn
from webauthn.helpers import exceptions as wa_errors
from webauthn.helpers import parse_authentication_credential_json, parse_registration_credential_json
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from protocol.wire.error import ErrorCode, ProtocolError

from .game.live import now_ms
from .runtime.service import Service
from .session import Session

__all__ = ["CHALLENGE_TTL_MS", "PasskeyService", "Pending", "b64url"]

RP_NAME = "Scorpion Race"
CHALLENGE_TTL_MS = 120_000
"""How long a ceremony's challenge is good for."""
MAX_PASSKEYS = 10
"""Passkeys one account may have."""

Purpose = Literal["register", "login"]


def b64url(raw: bytes) -> str:
    """Return bytes as unpadded base64url, as WebAuthn's JSON forms write them."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class Pending:
    """A ceremony begun on a connection: what its answer is checked against."""

    purpose: Purpose
    challenge: bytes
    rp_id: str
    origin: str
    username: str | None
    deadline: int


@dataclass(frozen=True, slots=True)
class NewPasskey:
    """A verified new passkey: its credential id and what is stored of it."""

    credential: str
    record: dict[str, Any]


_REASONS = (
    ("sign count", "its signature counter went backwards (a copied authenticator?)"),
    ("origin", "it was made for another site's page"),
    ("rp id", "it was made for another site"),
    ("challenge", "it answers another challenge"),
    ("type", "it answers the other kind of ceremony (register or login)"),
    ("present", "the user was not present"),
    ("signature", "its signature is wrong"),
    ("public key", "its public key cannot be used"),
    ("json", "it is not a credential's JSON"),
)
"""The library's failures, by a word of its message, in the protocol's own words."""


def _why(exc: Exception) -> str:
    text = str(exc).lower()
    for word, reason in _REASONS:
        if word in text:
            return reason
    return "it is not a valid credential"


def _bad(why: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_PASSKEY, f"the passkey's answer does not verify: {why}")


class PasskeyService(Service):
    """The passkey ceremonies of one node (what the account handlers call)."""

    def _party(self, session: Session) -> tuple[str, str]:
        """Return the relying party id and the origin of the page on this connection."""
        request = getattr(session.ws, "request", None)
        origin = str(request.headers.get("Origin", "")) if request is not None else ""
        host = urlsplit(origin).hostname or ""
        if not host:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED,
                "passkeys need a browser page (its origin): log in with a username and password instead",
            )
        return self.config.passkey_rp_id or host, origin.rstrip("/")

    def begin_register(
        self, session: Session, player: str, username: str, display: str, known: list[str]
    ) -> tuple[Pending, str]:
        """Begin making a passkey for ``player`` (``known``: the ids of the passkeys it has)."""
        if len(known) >= MAX_PASSKEYS:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED,
                f"an account has at most {MAX_PASSKEYS} passkeys: this one has them all",
            )
        rp_id, origin = self._party(session)
        options = webauthn.generate_registration_options(
            rp_id=rp_id,
            rp_name=RP_NAME,
            user_id=player.encode(),
            user_name=username,
            user_display_name=display or username,
            timeout=CHALLENGE_TTL_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.PREFERRED,
            ),
            exclude_credentials=[
                PublicKeyCredentialDescriptor(id=webauthn.base64url_to_bytes(c)) for c in known
            ],
        )
        pending = Pending("register", options.challenge, rp_id, origin, username, now_ms() + CHALLENGE_TTL_MS)
        return pending, webauthn.options_to_json(options)

    def begin_login(self, session: Session) -> tuple[Pending, str]:
        """Begin a login with any passkey of this site (the passkey names its account)."""
        rp_id, origin = self._party(session)
        options = webauthn.generate_authentication_options(
            rp_id=rp_id,
            challenge=secrets.token_bytes(32),
            timeout=CHALLENGE_TTL_MS,
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        pending = Pending("login", options.challenge, rp_id, origin, None, now_ms() + CHALLENGE_TTL_MS)
        return pending, webauthn.options_to_json(options)

    @staticmethod
    def take(session: Session, purpose: Purpose) -> Pending:
        """Take the connection's pending ceremony of ``purpose`` (it is good once)."""
        pending, session.passkey = session.passkey, None
        if not isinstance(pending, Pending) or pending.purpose != purpose:
            raise _bad(f"ask for passkey_options with purpose {purpose!r} first, on this connection")
        if pending.deadline < now_ms():
            raise _bad("its challenge expired: ask for passkey_options again")
        return pending

    def finish_register(self, pending: Pending, credential: str, device: str) -> NewPasskey:
        """Verify a new passkey's answer; return what to store of it."""
        try:
            parsed = parse_registration_credential_json(credential)
            verified = webauthn.verify_registration_response(
                credential=parsed,
                expected_challenge=pending.challenge,
                expected_rp_id=pending.rp_id,
                expected_origin=pending.origin,
            )
        except (wa_errors.InvalidJSONStructure, wa_errors.InvalidRegistrationResponse) as exc:
            raise _bad(_why(exc)) from None
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise _bad(f"not a registration credential ({type(exc).__name__})") from None
        record = {
            "key": b64url(verified.credential_public_key),
            "count": verified.sign_count,
            "rp": pending.rp_id,
            "device": device,
            "created": now_ms(),
            "used": 0,
        }
        return NewPasskey(b64url(verified.credential_id), record)

    @staticmethod
    def claimed(credential: str) -> tuple[str, str]:
        """Return the player (user handle) and credential id a login answer names, unverified."""
        try:
            parsed = parse_authentication_credential_json(credential)
        except (wa_errors.InvalidJSONStructure, wa_errors.InvalidAuthenticationResponse) as exc:
            raise _bad(_why(exc)) from None
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise _bad(f"not an authentication credential ({type(exc).__name__})") from None
        handle = parsed.response.user_handle
        if not handle:
            raise _bad("the passkey named no account (it is not a passkey of this site)")
        try:
            player = handle.decode()
        except UnicodeDecodeError:
            raise _bad("the passkey names no account of this site") from None
        return player, b64url(parsed.raw_id)

    @staticmethod
    def finish_login(pending: Pending, credential: str, record: dict[str, Any]) -> int:
        """Verify a login answer against the stored passkey; return its new signature count."""
        try:
            verified = webauthn.verify_authentication_response(
                credential=credential,
                expected_challenge=pending.challenge,
                expected_rp_id=pending.rp_id,
                expected_origin=pending.origin,
                credential_public_key=webauthn.base64url_to_bytes(record["key"]),
                credential_current_sign_count=int(record["count"]),
            )
        except (wa_errors.InvalidJSONStructure, wa_errors.InvalidAuthenticationResponse) as exc:
            raise _bad(_why(exc)) from None
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise _bad(f"not an authentication credential ({type(exc).__name__})") from None
        return int(verified.new_sign_count)
