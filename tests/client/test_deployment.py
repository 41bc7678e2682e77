"""The deployment's shape, run without containers: two server nodes behind HAProxy with the
project's own ``deploy/haproxy.cfg`` (its service names and public port swapped for loopback
ones), and the settings ``docker-compose.yml`` gives the nodes."""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from client.api import ScorpionClient
from protocol.game import Board, card_text
from protocol.wire.codec import decode_dict, encode
from protocol.wire.message import Hello
from server.config import Config, load_config
from server.runtime.lifeline import die_with_parent
from tests.conftest import stop_process

from .conftest import ClientFactory, Node, NodeFactory, start_race

ROOT = Path(__file__).resolve().parents[2]
DEAL = 1234567890123


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def metric(node: Node, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.MULTILINE)
    assert found, f"{name} is not in /metrics"
    return float(found.group(1))


class Balancer:
    """HAProxy running ``deploy/haproxy.cfg`` in front of the given nodes."""

    def __init__(self, nodes: list[Node], directory: Path) -> None:
        binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
        assert binary, "haproxy is not installed: scripts/check installs Debian's haproxy package"
        config = (ROOT / "deploy" / "haproxy.cfg").read_text()
        self.port = free_port()
        replaced = config.replace("bind :8080", f"bind 127.0.0.1:{self.port}")
        # A capacity setting only: 50,000 connections need an open-files limit of about
        # 100,000, which a container gets and a test machine may not.
        replaced = re.sub(r"maxconn \d+", "maxconn 1000", replaced)
        for name, node in zip(("server-a", "server-b"), nodes, strict=True):
            replaced = replaced.replace(f"{name}:8765", f"127.0.0.1:{node.port}")
        assert replaced.count("127.0.0.1:") == 3, "deploy/haproxy.cfg no longer has the expected shape"
        path = directory / "haproxy.cfg"
        path.write_text(replaced)
        check = subprocess.run([binary, "-c", "-f", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        self.log = open(directory / "haproxy.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [binary, "-db", "-f", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def wait_ready(self) -> None:
        for _ in range(200):
            if http_status(f"http://127.0.0.1:{self.port}/healthz") == 200:
                return
            assert self.process.poll() is None, "haproxy stopped"
            subprocess.run(["sleep", "0.05"])
        raise AssertionError("the balancer never answered /healthz")

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()


@pytest.fixture
def deployment(start_node: NodeFactory, tmp_path: Path) -> Iterator[tuple[list[Node], Balancer]]:
    # The balancer forwards the client's address (X-Forwarded-For), believed from loopback.
    nodes = [start_node(test_deals=DEAL, trusted_proxies="127.0.0.1/32") for _ in range(2)]
    balancer = Balancer(nodes, tmp_path)
    try:
        balancer.wait_ready()
        yield nodes, balancer
    finally:
        balancer.stop()


async def hello_from(url: str, source: str) -> dict[str, Any]:
    """Connect from the loopback address ``source``, say hello, return the answer."""
    async with connect(url, subprotocols=["scorpion.v1.msgpack"], local_addr=(source, 0)) as ws:  # type: ignore[list-item]
        await ws.send(encode(Hello(name="Ann")))
        return decode_dict(await ws.recv())


async def test_behind_the_balancer_each_client_address_has_its_own_limits(
    start_node: NodeFactory, tmp_path: Path
) -> None:
    # The nodes see the balancer (127.0.0.1) as their peer; the clients come from other
    # loopback addresses, which only the balancer's X-Forwarded-For tells them.
    nodes = [start_node(guests_per_minute=1, trusted_proxies="127.0.0.1/32") for _ in range(2)]
    balancer = Balancer(nodes, tmp_path)
    try:
        balancer.wait_ready()
        assert (await hello_from(balancer.url, "127.0.0.2"))["type"] == "welcome"
        assert (await hello_from(balancer.url, "127.0.0.3"))["type"] == "welcome"
        again = await hello_from(balancer.url, "127.0.0.2")  # on either node: the counts are shared
        assert again["type"] == "error" and again["code"] == "rate_limited", again
    finally:
        balancer.stop()


def compose_settings(compose: str) -> dict[str, dict[str, str]]:
    """Each service's ``SCORPION_*`` settings in ``docker-compose.yml``, by service name."""
    services: dict[str, dict[str, str]] = {}
    service = None
    for line in compose.splitlines():
        named = re.match(r"^  ([a-z0-9-]+):\s*(&\S+)?$", line)
        if named:
            service = named.group(1)
            continue
        setting = re.match(r"^\s+(SCORPION_[A-Z_]+):\s*(.*)$", line)
        if setting and service is not None:
            services.setdefault(service, {})[setting.group(1)] = setting.group(2).strip().strip('"')
    return services


def test_the_compose_file_only_sets_settings_the_server_reads() -> None:
    services = compose_settings((ROOT / "docker-compose.yml").read_text())
    assert {"server-a", "server-b", "cluster-server-a", "cluster-server-b"} <= set(services)
    known = {"SCORPION_" + item.name.upper() for item in fields(Config)}
    for service, environ in services.items():
        assert set(environ) <= known, f"{service} sets unknown settings: {set(environ) - known}"
        config = load_config([], environ)  # a malformed value raises here
        assert config.node_id == service and config.log_format == "json"
        assert config.redis_url == environ["SCORPION_REDIS_URL"]
        assert config != Config()
    assert services["server-a"]["SCORPION_REDIS_URL"] == "redis://valkey:6379/0"
    cluster = load_config([], services["cluster-server-a"])
    assert cluster.redis_url is not None and cluster.redis_url.startswith("redis+cluster://")
    assert cluster.redis_wait_replicas == 1
    # The image listens where the balancers look for it.
    assert '"--port", "8765"' in (ROOT / "Dockerfile").read_text()
    assert "server-a:8765" in (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert "cluster-server-a:8765" in (ROOT / "deploy" / "cluster" / "haproxy.cfg").read_text()


def test_the_image_build_copies_every_file_the_package_build_reads() -> None:
    # The build stage must see setup.py (which compiles the solver's search) and every
    # package pyproject.toml lists; a file left out builds a different package.
    dockerfile = (ROOT / "Dockerfile").read_text()
    sources = re.findall(r"^COPY (?!--from)(.+) \S+$", dockerfile, re.M)
    copied = {name for line in sources for name in line.split()}
    needed = {"pyproject.toml", "setup.py", "README.md", "protocol", "server", "client"}
    assert needed <= copied, f"the Dockerfile does not copy {needed - copied}"
    assert "gcc" in dockerfile, "the build stage needs a C compiler for the compiled search"


async def test_racers_behind_the_balancer_resume_on_the_other_node_when_one_stops(
    deployment: tuple[list[Node], Balancer], make_client: ClientFactory
) -> None:
    nodes, balancer = deployment

    def client(name: str) -> ScorpionClient:
        return ScorpionClient(balancer.url, name, backoff=(0.05, 0.3))

    ann, bob = client("Ann"), client("Bob")
    try:
        await ann.connect()
        await bob.connect()
        # leastconn spreads the two racers over the two replicas.
        assert [metric(node, "scorpion_connections") for node in nodes] == [1.0, 1.0]
        await start_race(ann, bob)
        boards = {"Ann": Board.new("scorpion", DEAL), "Bob": Board.new("scorpion", DEAL)}

        async def play(racer: ScorpionClient, count: int) -> None:
            board = boards[racer.name]
            for _ in range(count):
                move = next(m for m in board.legal_moves() if not m.is_deal)
                await racer.move(move)
                board.push(move)

        await asyncio.gather(play(ann, 2), play(bob, 2))
        nodes[0].stop(signal.SIGTERM)  # closes its racer with 1012: it comes back through the balancer
        deadline = asyncio.get_running_loop().time() + 30
        while not (ann.connected and bob.connected and ann.reconnects + bob.reconnects == 1):
            assert asyncio.get_running_loop().time() < deadline, (ann.reconnects, bob.reconnects)
            await asyncio.sleep(0.05)
        await asyncio.gather(play(ann, 2), play(bob, 2))
        assert metric(nodes[1], "scorpion_connections") == 2.0
        for racer in (ann, bob):
            board = boards[racer.name]
            assert racer.race is not None and racer.race.summary["moves"] == 4
            assert racer.race.view is not None and racer.race.view["columns"] == [
                [None if i < d else card_text(c) for i, c in enumerate(col)]
                for col, d in zip(board.columns, board.down, strict=True)
            ]
    finally:
        await ann.close()
        await bob.close()
