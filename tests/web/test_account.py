"""End-to-end: accounts in real browsers against a real server, with Chromium's virtual
authenticator (the DevTools protocol's WebAuthn domain) standing for a phone or a laptop's
passkey store.

A guest creates an account with a passkey; the passkey, carried to a second browser (as a
synced passkey would be), signs in there; the second browser lists the sessions and
revokes the first one's, which becomes a guest again. A guest asking for ranked play is
offered an account on the spot; a password account signs in with its password.
(WebAuthn takes no IP address as a relying party: these pages open http://localhost.)
"""

from __future__ import annotations

import secrets
from typing import Any

from playwright.sync_api import CDPSession, Page, expect

from ..server.conftest import PASSWORD, NodeFactory
from .conftest import PageFactory
from .test_accessibility import violations


def local_url(node: object) -> str:
    return f"http://localhost:{node.port}/"  # type: ignore[attr-defined]


def authenticator(page: Page) -> tuple[CDPSession, str]:
    """Give the page's browser a virtual platform authenticator that holds passkeys and
    verifies its user at once; return the DevTools session and its id."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    options = {
        "protocol": "ctap2",
        "transport": "internal",
        "hasResidentKey": True,
        "hasUserVerification": True,
        "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }
    added = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})
    return cdp, added["authenticatorId"]


def lobby_says(page: Page, text: str) -> None:
    expect(page.locator("#lobby-account")).to_have_text(text, timeout=15_000)


def test_a_passkey_account_signs_in_on_a_second_browser_and_revokes_the_first(
    start_node: NodeFactory, open_page: PageFactory, axe_script: str
) -> None:
    node = start_node()
    first = open_page(local_url(node), "Ann", account=False)
    cdp, device = authenticator(first)
    lobby_says(first, "Playing as a guest")
    username = "ann" + secrets.token_hex(3)

    first.click("#btn-account")
    expect(first.locator("#account")).to_be_visible()
    expect(first.get_by_role("dialog", name="Account")).to_be_visible()
    expect(first.locator("#account-username")).to_be_focused()
    problems = violations(first, axe_script, "account dialog, a guest's")
    first.fill("#account-username", username)
    first.click("#btn-passkey-create")
    expect(first.locator("#account-status")).to_contain_text(f"Your account {username} is ready")
    lobby_says(first, f"Signed in as {username}")
    expect(first.locator("#account-sessions li")).to_have_count(1)
    expect(first.locator("#account-sessions li")).to_contain_text("Chromium on Linux (this browser)")
    problems += violations(first, axe_script, "account dialog, an account's")
    assert not problems, "\n".join(problems)
    (credential,) = cdp.send("WebAuthn.getCredentials", {"authenticatorId": device})["credentials"]
    assert credential["isResidentCredential"] and credential["rpId"] == "localhost"
    first.click("#btn-account-close")

    # The passkey, synced to a second browser, signs in there: no username typed.
    second = open_page(local_url(node), "Laptop", account=False)
    other, other_device = authenticator(second)
    other.send("WebAuthn.addCredential", {"authenticatorId": other_device, "credential": credential})
    second.click("#btn-account")
    second.click("#btn-passkey-signin")
    lobby_says(second, f"Signed in as {username}")
    assert second.evaluate("window.scorpion.state.me.player") == first.evaluate(
        "window.scorpion.state.me.player"
    )

    # The second browser lists both sessions and revokes the first one's.
    second.click("#btn-account")
    rows = second.locator("#account-sessions li")
    expect(rows).to_have_count(2)
    mine = rows.filter(has_text="(this browser)")
    expect(mine).to_have_count(1)
    rows.filter(has_not_text="(this browser)").get_by_role("button", name="Revoke").click()
    expect(second.locator("#account-status")).to_contain_text("Revoked")
    expect(rows).to_have_count(1)
    # The first browser's session is gone: it is told, and comes back as a new guest.
    expect(first.locator("#notice-text")).to_contain_text("signed out from another one")
    lobby_says(first, "Playing as a guest")
    assert first.evaluate("window.scorpion.state.me.player") != second.evaluate(
        "window.scorpion.state.me.player"
    )


def test_a_guest_asking_for_ranked_play_is_offered_an_account_and_a_password_account_signs_in(
    start_node: NodeFactory, open_page: PageFactory
) -> None:
    node = start_node()
    guest = open_page(local_url(node), "Bea", account=False)
    authenticator(guest)
    guest.check("#queue-rated")
    guest.click("#btn-queue")
    expect(guest.locator("#account")).to_be_visible()
    expect(guest.locator("#account-status")).to_contain_text("Ranked play needs an account")
    expect(guest.locator("#account-status")).to_contain_text("passkey is one tap")
    expect(guest.locator("#screen-lobby")).to_be_visible()
    # One passkey tap makes the account (the username typed first), and the rated queue opens.
    guest.fill("#account-username", "bea" + secrets.token_hex(3))
    guest.click("#btn-passkey-create")
    expect(guest.locator("#account-status")).to_contain_text("is ready")
    guest.click("#btn-account-close")
    guest.click("#btn-queue")
    expect(guest.locator("#screen-queue")).to_be_visible()

    # A password account (made over the protocol) signs in on another browser, then out.
    maker = open_page(local_url(node), "Cy", account=False)
    username = "cy" + secrets.token_hex(3)
    maker.evaluate(
        "([u, p]) => window.scorpion.link.send({type: 'register', username: u, password: p})",
        [username, PASSWORD],
    )
    lobby_says(maker, f"Signed in as {username}")
    other = open_page(local_url(node), "Phone", account=False)
    other.click("#btn-account")
    other.fill("#signin-username", username.upper())
    other.fill("#signin-password", "not the password")
    other.click("#account-signin-form button[type=submit]")
    expect(other.locator("#account-status")).to_contain_text(
        "no account has this username and password", ignore_case=True
    )
    other.fill("#signin-password", PASSWORD)
    other.click("#account-signin-form button[type=submit]")
    lobby_says(other, f"Signed in as {username}")
    other.click("#btn-account")
    other.click("#btn-signout")
    lobby_says(other, "Playing as a guest")
    sessions: Any = maker.evaluate("window.scorpion.state.me.username")
    assert sessions == username
