"""Tests of the Valkey Cluster harness alone (tests/valkey_cluster.py): no game server involved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

from tests.valkey_cluster import SLOTS, ValkeyCluster


def _serve(directory: Path) -> Iterator[ValkeyCluster]:
    cluster = ValkeyCluster(directory, primaries=3, replicas_per_primary=1)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyCluster]:
    """One 3-primary, 1-replica-each cluster shared by the module's non-destructive tests."""
    yield from _serve(tmp_path_factory.mktemp("valkey-cluster"))


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[ValkeyCluster]:
    """A cluster of the test's own, to kill nodes in."""
    yield from _serve(tmp_path / "cluster")


def client_of(cluster: ValkeyCluster) -> RedisCluster:
    nodes = [ClusterNode(host, port) for host, port in cluster.startup_nodes]  # type: ignore[no-untyped-call]
    return RedisCluster(startup_nodes=nodes, decode_responses=True, socket_timeout=5)


def direct(port: int) -> redis.Redis:
    """A one-connection client of one node (so READONLY holds for the next commands)."""
    return redis.Redis(
        "127.0.0.1", port, decode_responses=True, socket_timeout=5, single_connection_client=True
    )


def keys_on_each_primary(cluster: ValkeyCluster, prefix: str) -> dict[int, str]:
    """One key per primary port, found by asking the cluster which primary serves it."""
    found: dict[int, str] = {}
    for i in range(1000):
        key = f"{prefix}:{i}"
        found.setdefault(cluster.primary_of(key)[1], key)
        if len(found) == len(cluster.primary_ports):
            break
    return found


def test_cluster_serves_every_slot_over_three_primaries_with_replicas(cluster: ValkeyCluster) -> None:
    cluster.flush()
    ranges = cluster.slot_map()
    assert sum(last - first + 1 for first, last, _, _ in ranges) == SLOTS
    assert sorted({primary for _, _, primary, _ in ranges}) == sorted(cluster.primary_ports)
    replicas = {primary: cluster.replica_of(primary) for primary in cluster.primary_ports}
    assert all(len(listed) == 1 for _, _, _, listed in ranges)
    assert {primary: listed[0] for _, _, primary, listed in ranges} == replicas
    assert len(set(replicas.values()) | set(replicas)) == 6
    assert {port for _, port in cluster.startup_nodes} == set(replicas.values()) | set(replicas)
    for primary, replica in replicas.items():
        with direct(replica) as node:
            info = node.info("replication")
        assert (info["role"], info["master_port"], info["master_link_status"]) == ("slave", primary, "up")
    assert cluster.url == "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in cluster.primary_ports)

    keys = keys_on_each_primary(cluster, "spread")
    assert len(keys) == 3
    client = client_of(cluster)
    try:
        for port, key in keys.items():
            assert client.set(key, f"value-{port}")
            assert client.get(key) == f"value-{port}"
            with direct(port) as node:  # it really landed on that primary
                assert node.execute_command("CLUSTER", "COUNTKEYSINSLOT", key_slot(key.encode())) == 1
                assert node.get(key) == f"value-{port}"
    finally:
        client.close()
    assert set(cluster.cpu_seconds()) == set(replicas) | set(replicas.values())
    assert all(seconds >= 0 for seconds in cluster.cpu_seconds().values())


def test_slot_migration_moves_every_key_while_writes_go_on(cluster: ValkeyCluster) -> None:
    cluster.flush()
    slot = key_slot(b"{mig}")
    source = cluster.primary_of(slot)[1]
    target = next(port for port in cluster.primary_ports if port != source)
    client = client_of(cluster)
    try:
        expected = {f"{{mig}}:{i}": f"v{i}" for i in range(200)}
        for key, value in expected.items():
            client.set(key, value)
        with direct(source) as node:
            assert node.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 200
        batches: list[int] = []

        def during(batch: list[str]) -> None:
            """Write new keys and overwrite moved ones, in the middle of the migration."""
            n = len(batches)
            batches.append(len(batch))
            for j in range(5):
                key = f"{{mig}}:during:{n}:{j}"
                assert client.set(key, f"d{n}{j}")
                expected[key] = f"d{n}{j}"
            assert client.set(batch[0], "rewritten")
            expected[batch[0]] = "rewritten"
            assert client.get(batch[-1]) == expected[batch[-1]]

        cluster.migrate_slot(slot, target, on_key=during)
        assert len(batches) >= 2 and sum(batches) >= 200
        assert cluster.primary_of(slot) == ("127.0.0.1", target)
        assert cluster.primary_of("{mig}:anything") == ("127.0.0.1", target)
        with direct(source) as node:
            assert node.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
        with direct(target) as node:
            assert node.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(expected)
        assert {key: client.get(key) for key in expected} == expected
    finally:
        client.close()


def test_failover_promotes_the_replica_and_the_killed_node_rejoins_as_replica(
    own_cluster: ValkeyCluster,
) -> None:
    key = "failover-key"
    slot = key_slot(key.encode())
    old = own_cluster.primary_of(key)[1]
    replica = own_cluster.replica_of(old)
    with direct(old) as node:
        assert node.set(key, "kept")
        assert node.execute_command("WAIT", 1, 2000) == 1
    own_cluster.kill(old)

    new, seconds = own_cluster.wait_for_failover(old, slot)
    assert new == replica
    assert seconds < 30
    assert own_cluster.primary_of(slot) == ("127.0.0.1", new)
    with direct(new) as node:
        assert node.info("replication")["role"] == "master"
        assert node.get(key) == "kept"
    client = client_of(own_cluster)
    try:
        assert client.get(key) == "kept"
        assert client.set(key, "after")
    finally:
        client.close()

    own_cluster.restart(old)
    with direct(old) as node:
        info = node.info("replication")
    assert (info["role"], info["master_port"], info["master_link_status"]) == ("slave", new, "up")
    assert own_cluster.replica_of(new) == old
    assert own_cluster.primary_of(slot) == ("127.0.0.1", new)
    with direct(new) as node:  # the rejoined replica copies new writes again
        assert node.set(key, "replicated")
        assert node.execute_command("WAIT", 1, 2000) == 1
    with direct(old) as node:
        assert node.execute_command("READONLY")
        assert node.get(key) == "replicated"
