"""A software passkey authenticator for tests: what a browser and its authenticator answer
to WebAuthn options, built by hand from the specification (P-256 keys, "none" attestation).

It is written independently of the server's WebAuthn library, so the server's checks are
tested against answers it did not make itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Passkey:
    """One credential the authenticator holds."""

    credential: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    user: bytes
    count: int = 0


@dataclass
class Authenticator:
    """Holds passkeys and answers ``create`` and ``get`` options as a browser would."""

    origin: str
    passkeys: list[Passkey] = field(default_factory=list)

    def _client_data(self, kind: str, challenge: str, origin: str | None = None) -> bytes:
        data = {"type": kind, "challenge": challenge, "origin": origin or self.origin, "crossOrigin": False}
        return json.dumps(data).encode()

    def create(self, options_json: str, origin: str | None = None) -> str:
        """Make a passkey for the options' relying party and user; return the credential JSON."""
        options = json.loads(options_json)
        rp_id, user = options["rp"]["id"], unb64url(options["user"]["id"])
        passkey = Passkey(secrets.token_bytes(16), ec.generate_private_key(ec.SECP256R1()), rp_id, user)
        self.passkeys.append(passkey)
        numbers = passkey.key.public_key().public_numbers()
        cose = cbor2.dumps(
            {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        )
        attested = bytes(16) + struct.pack(">H", len(passkey.credential)) + passkey.credential + cose
        auth_data = (
            hashlib.sha256(rp_id.encode()).digest() + bytes([UP | UV | AT]) + struct.pack(">I", 0) + attested
        )
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        return json.dumps(
            {
                "id": b64url(passkey.credential),
                "rawId": b64url(passkey.credential),
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64url(client_data),
                    "attestationObject": b64url(attestation),
                    "transports": ["internal"],
                },
                "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
            }
        )

    def get(self, options_json: str, passkey: Passkey | None = None, origin: str | None = None) -> str:
        """Sign the options' challenge with a passkey of their relying party; return the
        credential JSON (``passkey``: that one, whatever relying party it is for)."""
        options = json.loads(options_json)
        if passkey is None:
            passkey = next(p for p in self.passkeys if p.rp_id == options["rpId"])
        passkey.count += 1
        rp_hash = hashlib.sha256(options["rpId"].encode()).digest()
        auth_data = rp_hash + bytes([UP | UV]) + struct.pack(">I", passkey.count)
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = passkey.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return credential_json(passkey, auth_data, client_data, signature)


def credential_json(passkey: Passkey, auth_data: bytes, client_data: bytes, signature: bytes) -> str:
    """Return an authentication credential's JSON, as ``PublicKeyCredential.toJSON()`` gives it."""
    response: dict[str, Any] = {
        "clientDataJSON": b64url(client_data),
        "authenticatorData": b64url(auth_data),
        "signature": b64url(signature),
        "userHandle": b64url(passkey.user),
    }
    return json.dumps(
        {
            "id": b64url(passkey.credential),
            "rawId": b64url(passkey.credential),
            "type": "public-key",
            "response": response,
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }
    )
