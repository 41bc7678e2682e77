"""Browser fixtures: Debian's Chromium driven by Playwright, and real server processes.

The tests do not skip when Chromium is missing: CI (``.ci/run``) installs it, so its
absence is a failure to report, not a reason to stay silent.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.server.conftest import PASSWORD, start_node  # noqa: F401

CHROMIUM = os.environ.get("SCORPION_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Launch one headless Chromium for the whole session."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield instance
        instance.close()


AXE_DIR = Path(__file__).resolve().parent / "axe"
AXE_SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def axe_script() -> str:
    """Return the path of axe-core's axe.min.js, for the accessibility check to inject.

    scripts/check installs it (``npm ci`` in tests/web/axe); where it is missing the
    fixture installs it the same way, and fails (never skips) when it cannot.
    """
    if not AXE_SCRIPT.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("axe-core is missing and so is npm: install Debian's npm (scripts/check does)")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=AXE_DIR, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0 or not AXE_SCRIPT.exists():
            pytest.fail(f"npm ci in {AXE_DIR} failed: {done.stderr.strip()[-2000:]}")
    return str(AXE_SCRIPT)


@pytest.fixture
def artifacts() -> Path:
    """Return the (git-ignored) folder where screenshots are kept."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


PageFactory = Callable[..., Page]
RECORD_BLOCKED = (
    "window.__blocked = []; document.addEventListener('securitypolicyviolation', "
    "(e) => window.__blocked.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`));"
)
"""Keep what the page's content security policy blocked, for the test to find at its end."""
expect.set_options(timeout=10_000)


@pytest.fixture
def open_page(browser: Browser) -> Iterator[PageFactory]:
    """Open pages, each in its own context (its own localStorage: its own player)."""
    contexts: list[BrowserContext] = []
    problems: list[str] = []
    pages: list[tuple[str, Page]] = []

    def open_(
        url: str, name: str, viewport: dict[str, int] | None = None, account: bool = True, **extra: Any
    ) -> Page:
        """Open a page as ``name``; with ``account`` (ranked play needs one) its guest
        registers at once, and the page keeps the account's session token."""
        context = browser.new_context(viewport=viewport or DESKTOP, **extra)
        context.set_default_timeout(10_000)
        context.add_init_script(
            f"if (!localStorage.getItem('scorpion.name')) localStorage.setItem('scorpion.name', {name!r});"
        )
        context.add_init_script(RECORD_BLOCKED)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"{name}: {error}"))
        pages.append((name, page))
        page.goto(url)
        page.wait_for_selector("#conn[data-state=open]")
        # The server answers a session's messages in order, and the first daily_info of a
        # day picks and proves the day's deal (seconds on a busy machine): let it finish
        # so that it does not eat into the time limits of the steps that follow.
        expect(page.locator("#daily-info")).not_to_contain_text("Asking", timeout=60_000)
        if account:
            guest = page.evaluate("localStorage.getItem('scorpion.token')")
            username = "u" + secrets.token_hex(6)
            page.evaluate(
                "([u, p]) => window.scorpion.link.send({type: 'register', username: u, password: p})",
                [username, PASSWORD],
            )
            for _ in range(200):  # polled from here: the page's policy forbids eval
                if page.evaluate("localStorage.getItem('scorpion.token')") != guest:
                    break
                page.wait_for_timeout(50)
            else:
                raise AssertionError(f"{name}'s page never became an account")
        return page

    yield open_
    for name, page in pages:
        if not page.is_closed():
            problems.extend(f"{name}: {v}" for v in page.evaluate("window.__blocked || []"))
    for context in contexts:
        context.close()
    assert not problems, f"JavaScript errors or content blocked by the page's policy: {problems}"
