"""`agent farm-node`: join this machine to a Ray cluster as a node of `agent farm --ray`,
with the phones its adb server lists.

Ray fixes a node's resources when its raylet starts, and phones come and go, so the
phones are not advertised as resources: the node runs a roster instead, a detached actor
named after the node and pinned to it (`agent.farm.ray_actor.start_roster`), which lists
the node's adb server every ~2 s. The driver asks every roster for its phones and places
each phone's actor on its node.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.errors import AgentError
from agent.farm.ray_farm import LOCAL_HOSTS, check_address, import_ray, keep_signal_handlers


def node_seed(i: int) -> int:
    """The first game seed of a test cluster's node `i` (its phones count up from it)."""
    return 100 * i


@dataclass(frozen=True)
class NodeJoined:
    node_id: str
    node_ip: str
    adb: str
    devices: list[dict[str, Any]]
    started_raylet: bool


def ray_start_command(address: str, node_ip_address: str | None, num_cpus: int | None) -> list[str]:
    """`ray start` for a worker node of the cluster at `address` (no dashboard: worker
    nodes never run one; usage stats off)."""
    cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--address", address, "--disable-usage-stats"]
    if node_ip_address:
        cmd += ["--node-ip-address", node_ip_address]
    if num_cpus is not None:
        cmd += ["--num-cpus", str(num_cpus)]
    return cmd


def join_node(address: str, adb: Any, node_ip_address: str | None = None, num_cpus: int | None = None,
              start: bool = True, every_s: float = 2.0) -> NodeJoined:  # fmt: skip
    """Start a raylet here joined to `address` (unless `start` is False: one runs here
    already), then this node's roster of the phones of `adb` (an AdbTarget)."""
    ray = import_ray()
    check_address(address, option="--address")
    if start and LOCAL_HOSTS & {address.rpartition(":")[0], node_ip_address}:
        raise AgentError("`ray start` cannot join a cluster on 127.0.0.1: Ray rewrites loopback addresses to this "
                         "host's network address",  # fmt: skip
                         hint="start the node yourself (ray.cluster_utils.Cluster in tests, or `ray start` with this host's IP) and add --no-start")  # fmt: skip
    if adb.host in ("127.0.0.1", "localhost"):
        from agent.device.adb import ensure_server

        ensure_server(adb)  # the roster lists it from now on
    if start:
        r = subprocess.run(ray_start_command(address, node_ip_address, num_cpus), capture_output=True, text=True,
                           timeout=180)  # fmt: skip
        if r.returncode != 0:
            said = (r.stderr or r.stdout).strip().splitlines()
            raise AgentError(f"`ray start --address {address}` failed: {said[-1] if said else r.returncode}",
                             hint="if a raylet of this cluster runs here already, add --no-start; else see `ray status`")  # fmt: skip
    from agent.farm.ray_actor import start_roster
    from agent.farm.ray_farm import connect

    connect(address, node_ip_address)
    try:
        ctx = ray.get_runtime_context()
        node_id = ctx.get_node_id()
        roster = start_roster(node_id, adb, every_s)
        reply = ray.get(roster.devices.remote(), timeout=60)
        ip = next((n.get("NodeManagerAddress", "?") for n in ray.nodes() if n["NodeID"] == node_id), "?")
    finally:
        ray.shutdown()  # the roster is detached: it stays with the node
    return NodeJoined(node_id, ip, reply["adb"], reply["devices"], start)


@dataclass
class SimCluster:
    """A Ray cluster on this machine for tests and benchmarks: what `sim_cluster` made."""

    address: str
    nodes: list[str]  # the phone nodes' ids, in order
    adb: list[Any]  # each phone node's own adb server (AdbTarget)
    serials: list[list[str]]  # each phone node's simulated phones
    cluster: Any = None  # ray.cluster_utils.Cluster
    node_objects: list[Any] | None = None

    def node_of(self, serial: str) -> str:
        return next(node for node, phones in zip(self.nodes, self.serials) if serial in phones)


@contextmanager
def sim_cluster(nodes: int, phones_per_node: int, profiles: Path, log_dir: Path, game: str = "match3",
                game_args: Sequence[str] = (), cpus_per_node: int = 2) -> Iterator[SimCluster]:  # fmt: skip
    """A head and `nodes` worker nodes of Ray's own `ray.cluster_utils.Cluster`, all on
    127.0.0.1 with the dashboard off; each worker node with its own private adb server,
    `phones_per_node` simulated phones on it, and its roster (as `agent farm-node` starts
    it). This process is connected to it as the driver; everything is ended on the way out
    (the cluster, the phones, the adb servers)."""
    ray = import_ray()
    from ray.cluster_utils import Cluster

    from agent.device.adb import AdbTarget, ensure_server, stop_server
    from agent.farm.ray_actor import start_roster
    from agent.farm.ray_farm import connect
    from agent.simphone.fleet import SimFleet
    from agent.simphone.launch import free_port

    # Private adb servers: no probing of the emulator ports, no 3 s wait for USB.
    os.environ.setdefault("ADB_LOCAL_TRANSPORT_MAX_PORT", "5554")
    os.environ.setdefault("ADB_LIBUSB", "0")
    local: dict[str, Any] = {"node_ip_address": "127.0.0.1", "include_dashboard": False}
    targets = [AdbTarget("127.0.0.1", free_port()) for _ in range(nodes)]
    with ExitStack() as stack:
        # Ended last, once no roster can list (and so start) them again.
        for target in targets:
            stack.callback(stop_server, target)
            # Started before the cluster: a port only chosen free, not held, was at times
            # taken by one of Ray's own servers (an adb client then heard HTTP).
            ensure_server(target)
        with keep_signal_handlers():
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, **local})
        stack.callback(cluster.shutdown)
        stack.callback(lambda: ray.shutdown() if ray.is_initialized() else None)
        with keep_signal_handlers():
            added = [cluster.add_node(num_cpus=cpus_per_node, **local) for _ in targets]
        cluster.wait_for_nodes()
        connect(cluster.address, "127.0.0.1")
        fleets = [stack.enter_context(SimFleet(phones_per_node, target, profiles=profiles, game=game,
                                               game_args=game_args, log_dir=log_dir / f"node{i}",
                                               base_seed=node_seed(i)))
                  for i, target in enumerate(targets)]  # fmt: skip
        for node, target in zip(added, targets):
            start_roster(node.node_id, target)
        yield SimCluster(cluster.address, [n.node_id for n in added], targets, [f.serials for f in fleets], cluster,
                         added)  # fmt: skip
