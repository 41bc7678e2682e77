"""A real multi-node Valkey Cluster on loopback, for integration tests (formed without valkey-cli)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
from redis.crc import key_slot

from tests.conftest import RedisServer, _free_port_pair, stop_process

HOST = "127.0.0.1"
SLOTS = 16384

T = TypeVar("T")
SlotMap = list[tuple[int, int, int, tuple[int, ...]]]
"""(first slot, last slot, primary port, replica ports) for each range, sorted."""


class ValkeyNode(RedisServer):
    """One cluster-enabled valkey-server on a loopback port, persisting with an fsynced AOF."""

    def __init__(self, directory: Path, port: int, node_timeout_ms: int, appendfsync: str = "always") -> None:
        super().__init__(directory)
        self.port = port
        self.node_timeout_ms = node_timeout_ms
        self.appendfsync = appendfsync

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def arguments(self) -> list[str]:
        return [
            "--port", str(self.port),
            "--bind", HOST,
            "--cluster-enabled", "yes",
            "--cluster-config-file", str(self.directory / f"nodes-{self.port}.conf"),
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--cluster-replica-validity-factor", "0",
            "--cluster-allow-replica-migration", "no",
            "--repl-diskless-sync-delay", "0",  # a replica's first sync waits 5 s otherwise
        ]  # fmt: skip

    def persistence(self) -> list[str]:
        return ["--save", "", "--appendonly", "yes", "--appendfsync", self.appendfsync]

    def start(self) -> None:
        super().start()
        self.command("CONFIG", "SET", "loglevel", "notice")  # cluster events, for the log tail

    def _ping(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def command(self, *args: Any) -> Any:
        """Run one command on this node (a connection of its own, 5 s timeout); str replies."""
        with redis.Redis(
            HOST, self.port, socket_timeout=5, socket_connect_timeout=2, decode_responses=True
        ) as r:
            return r.execute_command(*args)

    def flush(self) -> None:
        self.command("FLUSHALL")

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = (self.directory / "redis.log").read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


class ValkeyCluster:
    """``primaries`` primaries with ``replicas_per_primary`` replicas each, on 127.0.0.1."""

    def __init__(
        self,
        directory: Path,
        primaries: int = 3,
        replicas_per_primary: int = 1,
        node_timeout_ms: int = 1000,
        appendfsync: str = "always",
    ) -> None:
        self.directory = Path(directory)
        self.primaries = primaries
        self.replicas_per_primary = replicas_per_primary
        self.node_timeout_ms = node_timeout_ms
        self.appendfsync = appendfsync
        """Each node's ``appendfsync``: ``always`` for the tests' durability checks, ``everysec``
        to compare with a server persisting as the embedded one does."""
        self.nodes: dict[int, ValkeyNode] = {}
        self.primary_ports: list[int] = []
        """The ports of the nodes started as primaries (a failover does not change it)."""
        self.ids: dict[int, str] = {}
        self._killed_at: dict[int, float] = {}

    def start(self, timeout: float = 30) -> None:
        """Start every node, form the cluster, and wait until it is healthy and agreed."""
        total = self.primaries * (1 + self.replicas_per_primary)
        ports: list[int] = []
        while len(ports) < total:
            port = _free_port_pair()
            if all(port not in (p, p + 10000, p - 10000) for p in ports):
                ports.append(port)
        self.primary_ports = ports[: self.primaries]
        try:
            for port in ports:
                node = ValkeyNode(
                    self.directory / f"node-{port}", port, self.node_timeout_ms, self.appendfsync
                )
                self.nodes[port] = node
                node.start()
            for epoch, port in enumerate(ports, 1):  # distinct epochs: no collision to resolve
                self.nodes[port].command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
                self.ids[port] = self.nodes[port].command("CLUSTER", "MYID")
            for port in ports[1:]:
                self.nodes[port].command("CLUSTER", "MEET", HOST, ports[0])
            for i, port in enumerate(self.primary_ports):
                first, last = i * SLOTS // self.primaries, (i + 1) * SLOTS // self.primaries - 1
                self.nodes[port].command("CLUSTER", "ADDSLOTSRANGE", first, last)
            self._wait(lambda: all(len(self._table(p)) == total for p in ports), timeout, "nodes to meet")
            replicas = ports[self.primaries :]
            for i, port in enumerate(replicas):
                primary = self.primary_ports[i // self.replicas_per_primary]
                self.nodes[port].command("CLUSTER", "REPLICATE", self.ids[primary])
            self._wait(lambda: self._healthy(replicas=True, complete=True), timeout, "the cluster to form")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL) and remove the nodes' data directories."""
        for node in self.nodes.values():
            if node.process is not None:
                stop_process(node.process)
        for node in self.nodes.values():
            shutil.rmtree(node.directory, ignore_errors=True)

    def kill(self, port: int) -> None:
        """SIGKILL one node (it keeps its data and nodes file for :meth:`restart`)."""
        node = self.nodes[port]
        assert node.process is not None
        node.process.send_signal(signal.SIGKILL)
        node.process.wait(10)
        self._killed_at[port] = time.monotonic()

    def restart(self, port: int, timeout: float = 30) -> None:
        """Start a killed node again on its config and data; wait until it has rejoined."""
        if self.nodes[port].alive:
            raise RuntimeError(f"node {port} is running: kill it first")
        self.nodes[port].start()
        self._killed_at.pop(port, None)
        self._wait(lambda: self._healthy(replicas=True), timeout, f"node {port} to rejoin")

    @property
    def url(self) -> str:
        """``redis+cluster://`` URL listing the ports of the nodes started as primaries."""
        return "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in self.primary_ports)

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        """(host, port) of every node."""
        return [(HOST, port) for port in self.nodes]

    def live(self) -> list[ValkeyNode]:
        """The nodes whose process runs."""
        return [node for node in self.nodes.values() if node.alive]

    def slot_map(self, port: int | None = None, replicas: bool = True) -> SlotMap:
        """One node's CLUSTER SLOTS, normalised (by default, the first live node that answers)."""
        if port is None:
            return self._first_answer(lambda node: self.slot_map(node.port, replicas))
        ranges = []
        for first, last, primary, *others in self.nodes[port].command("CLUSTER", "SLOTS"):
            listed = tuple(sorted(int(o[1]) for o in others)) if replicas else ()
            ranges.append((int(first), int(last), int(primary[1]), listed))
        return sorted(ranges)

    def _first_answer(self, ask: Callable[[ValkeyNode], T]) -> T:
        """What the first live node that answers says."""
        error: Exception = RuntimeError("no node of the cluster is running")
        for node in self.live():
            try:
                return ask(node)
            except (redis.RedisError, OSError) as exc:
                error = exc
        raise error

    def primary_of(self, key_or_slot: str | int) -> tuple[str, int]:
        """(host, port) of the primary serving a key's slot, or a slot's, per a live node."""
        slot = key_or_slot if isinstance(key_or_slot, int) else key_slot(key_or_slot.encode())
        for first, last, primary, _ in self.slot_map(replicas=False):
            if first <= slot <= last:
                return HOST, primary
        raise RuntimeError(f"no node serves slot {slot}")

    def replica_of(self, primary_port: int) -> int:
        """The port of a replica of a primary (a reachable one if there is one)."""
        table = self._first_answer(lambda node: self._table(node.port))
        found = [p for p, (_, flags, master) in table.items() if master == self.ids[primary_port]]
        found.sort(key=lambda p: "fail" in table[p][1])
        if not found:
            raise RuntimeError(f"the node on port {primary_port} has no replica")
        return found[0]

    def current_primaries(self) -> list[int]:
        """Ports of the nodes a live node sees as reachable primaries."""
        table = self._first_answer(lambda node: self._table(node.port))
        return [p for p, (_, flags, _) in table.items() if "master" in flags and "fail" not in flags]

    def _table(self, port: int) -> dict[int, tuple[str, set[str], str]]:
        """One node's CLUSTER NODES: port -> (node id, flags, primary id or '-')."""
        table = {}
        for line in self.nodes[port].command("CLUSTER", "NODES").splitlines():
            node_id, address, flags, master = line.split()[:4]
            table[int(address.split("@")[0].rsplit(":", 1)[1])] = (node_id, set(flags.split(",")), master)
        return table

    def _healthy(self, replicas: bool, complete: bool = False) -> bool:
        """Every live node: cluster_state ok, replica links up, one slot map for all."""
        maps = []
        for node in self.live():
            if "cluster_state:ok" not in node.command("CLUSTER", "INFO"):
                return False
            info = node.command("INFO", "replication")
            if info.get("role") == "slave" and info.get("master_link_status") != "up":
                return False
            maps.append(self.slot_map(node.port, replicas))
        if any(m != maps[0] for m in maps):
            return False
        if not complete:
            return True
        covered = sum(last - first + 1 for first, last, _, _ in maps[0])  # all served, all replicated
        return covered == SLOTS and all(len(r[3]) == self.replicas_per_primary for r in maps[0])

    def _wait(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``ready`` (errors count as not ready) until true, or raise with the logs' tails."""
        deadline = time.monotonic() + timeout
        error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except (redis.RedisError, OSError, ValueError, IndexError) as exc:
                error = exc
            time.sleep(0.05)
        logs = "\n".join(
            f"--- node {port} ({'up' if node.alive else 'down'}):\n{node.log_tail()}"
            for port, node in self.nodes.items()
        )
        raise RuntimeError(f"timed out after {timeout} s waiting for {what} (last error: {error!r})\n{logs}")

    def wait_for_failover(self, old_primary_port: int, slot: int, timeout: float = 30) -> tuple[int, float]:
        """Wait until another node serves ``slot``, agreed by all live nodes in state ok.

        Returns the new primary's port and the seconds since the old one was killed by
        :meth:`kill` (or since this call, if it was not).
        """
        since = self._killed_at.get(old_primary_port, time.monotonic())
        owner: list[int] = []

        def moved() -> bool:
            if not self._healthy(replicas=False):
                return False
            owner[:] = [self.primary_of(slot)[1]]
            return owner[0] != old_primary_port

        self._wait(moved, timeout, f"slot {slot} to fail over from node {old_primary_port}")
        return owner[0], time.monotonic() - since

    def migrate_slot(
        self,
        slot: int,
        target_port: int,
        on_key: Callable[[list[str]], object] | None = None,
        timeout: float = 30,
    ) -> None:
        """Move ``slot`` to the primary ``target_port`` (IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE).

        ``on_key(batch)`` is called after each batch of keys has moved. Returns once every
        live node's slot map shows the target as the owner.
        """
        source_port = self.primary_of(slot)[1]
        if source_port == target_port:
            return
        source, target = self.nodes[source_port], self.nodes[target_port]
        target.command("CLUSTER", "SETSLOT", slot, "IMPORTING", self.ids[source_port])
        source.command("CLUSTER", "SETSLOT", slot, "MIGRATING", self.ids[target_port])
        deadline = time.monotonic() + timeout
        while keys := source.command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            if time.monotonic() > deadline:
                raise RuntimeError(f"slot {slot} still has keys on {source_port} after {timeout} s")
            source.command("MIGRATE", HOST, target_port, "", 0, 5000, "KEYS", *keys)
            if on_key is not None:
                on_key(keys)
        others = [p for p in self.current_primaries() if p not in (source_port, target_port)]
        for port in [target_port, source_port, *others]:
            self.nodes[port].command("CLUSTER", "SETSLOT", slot, "NODE", self.ids[target_port])

        def moved() -> bool:
            for node in self.live():
                owner = [r[2] for r in self.slot_map(node.port, False) if r[0] <= slot <= r[1]]
                if owner != [target_port]:
                    return False
            return True

        self._wait(moved, max(1.0, deadline - time.monotonic()), f"slot {slot} to move to {target_port}")

    def flush(self) -> None:
        """FLUSHALL on every (reachable) primary."""
        for port in self.current_primaries():
            self.nodes[port].flush()

    def cpu_seconds(self) -> dict[int, float]:
        """CPU seconds (user + system) each live node's process has used so far."""
        ticks = os.sysconf("SC_CLK_TCK")
        used = {}
        for node in self.live():
            assert node.process is not None
            fields = Path(f"/proc/{node.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            used[node.port] = (int(fields[11]) + int(fields[12])) / ticks
        return used
