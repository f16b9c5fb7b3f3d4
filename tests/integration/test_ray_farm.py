"""`agent farm --ray` on a real Ray cluster on this machine (integration): a head and two
worker nodes on 127.0.0.1 (Ray's own `ray.cluster_utils.Cluster`), each worker node with
its own private adb server and two simulated phones, and a roster per node started as
`agent farm-node` starts it."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from agent.play.journal import journal_name, read_journal
from agent.play.recording import Recording, RecordOptions

pytestmark = pytest.mark.integration

ray = pytest.importorskip("ray", reason='Ray is not installed (the farm\'s --ray extra): pip install ".[ray]"')

MOVES = 6


def _wait_for(cond, timeout_s: float) -> bool:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if cond():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and two phone nodes on 127.0.0.1 (dashboard off), each with its private adb
    server, two simulated phones and its roster; this process is the driver. One for the
    module (a cluster takes ~15 s to start and end); the test that removes a node runs last."""
    import adbutils

    from agent.farm.ray_node import sim_cluster
    from agent.simphone.launch import free_port

    try:
        adbutils.adb_path()
    except adbutils.AdbError:
        pytest.skip("no adb binary (install adb or adbutils)")
    root = tmp_path_factory.mktemp("cluster")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.MonkeyPatch.context() as env:
        # Private adb servers only: none on the default port, no probing of the emulator
        # ports, no 3 s wait for USB.
        env.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))
        env.setenv("ADB_LOCAL_TRANSPORT_MAX_PORT", "5554")
        env.setenv("ADB_LIBUSB", "0")
        env.delenv("ANDROID_SERIAL", raising=False)
        with sim_cluster(2, 2, root / "profiles", root / "phones") as c:
            # joining the cluster leaves the process's own stop on SIGTERM in place (ray.init
            # puts in one that exits at once)
            assert signal.getsignal(signal.SIGTERM) is before
            c.profiles = root / "profiles"
            yield c
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_farm_on_two_ray_nodes_survives_a_killed_actor(cluster, tmp_path):
    from agent.farm.controller import FarmOptions
    from agent.farm.ray_farm import RayFarm, device_key

    nodes = cluster.nodes
    serials = tuple(s for phones in cluster.serials for s in phones)
    node_of = {s: cluster.node_of(s) for s in serials}
    run_dir = tmp_path / "run"
    # (recorded: the recordings travel to the driver, the killed run's frames too)
    options = FarmOptions(moves=MOVES, profiles=cluster.profiles, serials=serials, backoff_s=(0.5,),
                          record=asdict(RecordOptions()))  # fmt: skip
    farm = RayFarm(None, run_dir, options, node_dir=tmp_path / "nodes")
    victim = device_key(nodes[0], cluster.serials[0][0])
    killed: dict = {}

    def kill_one_actor() -> None:
        # Mid-run: once the victim has made two moves, its actor's process dies at once.
        if _wait_for(lambda: victim in farm.actor_info and farm.rows[victim].moves >= 2, 240):
            killed.update(farm.actor_info[victim], moves=farm.rows[victim].moves)
            os.kill(killed["pid"], signal.SIGKILL)

    t = threading.Thread(target=kill_one_actor, daemon=True)
    t.start()
    summary = farm.run(give_up_after_s=60)
    t.join(5)
    (run_dir / "summary.json").write_text(json.dumps(summary))
    assert killed, "the victim never made two moves"

    devices = {d["serial"]: d for d in summary["devices"]}
    assert set(devices) == set(serials)
    # every phone played its moves, the victim too
    assert all(d["state"] == "done" and d["moves"] == MOVES for d in devices.values()), devices
    # every actor ran on its phone's node, the restarted one too
    for serial, d in devices.items():
        assert d["node"] == node_of[serial]
        key = device_key(d["node"], serial)
        ran_on = {e["node"] for e in summary["events"] if e["event"] == "actor" and e["key"] == key}
        assert ran_on == {node_of[serial]}, (serial, ran_on)
    # the killed actor was restarted by Ray (a new process, reconstructed) and played the rest
    lives = [e for e in summary["events"] if e["event"] == "actor" and e["key"] == victim]
    assert len(lives) >= 2 and lives[-1]["pid"] != killed["pid"] and lives[-1]["reconstructed"]
    assert any(e["event"] == "actor_died" and e["key"] == victim for e in summary["events"])
    assert devices[cluster.serials[0][0]]["failures"] >= 1 and devices[cluster.serials[0][0]]["runs"] >= 2

    # the driver's journals agree with the summary: one decision a move, none replayed
    for serial, d in devices.items():
        key = device_key(d["node"], serial)
        records = read_journal(run_dir / journal_name(key))
        assert sum(r["type"] == "decision" for r in records) == d["moves"] == MOVES, serial
        assert records[0]["type"] == "start" and records[-1]["type"] == "stop"
        # (the victim's last run played the moves left: its own limit, counted from what the
        # killed run had journaled, which may be a move past what the row showed at the kill)
        before = 0
        if key == victim:
            last_start = max(i for i, r in enumerate(records) if r["type"] == "start")
            before = sum(r["type"] == "decision" for r in records[:last_start])
            assert before >= killed["moves"]
        assert records[-1]["reason"] == f"move limit reached ({MOVES - before})"
        # a start line a run, but for a run whose call came while Ray still restarted the
        # killed actor (it failed before reaching the phone; the farm says so)
        not_started = sum(e["event"] == "run_not_started" and e["key"] == key for e in summary["events"])
        assert sum(r["type"] == "start" for r in records) == d["runs"] - not_started
        assert not_started == 0 or key == victim
    victim_log = read_journal(run_dir / journal_name(victim))
    crashed = [r for r in victim_log if r["type"] == "stop" and r.get("kind") == "crashed"]
    assert crashed and crashed[0]["written_by"] == "farm"
    # the killed run lost at most its current move: what it had journaled stays counted
    first_run = victim_log[: victim_log.index(crashed[0])]
    assert sum(r["type"] == "decision" for r in first_run) >= killed["moves"]
    # each node kept its own copy; the victim's copy got its stop line from the restarted actor
    node_copy = read_journal(tmp_path / "nodes" / run_dir.name / journal_name(victim))
    assert sum(r["type"] == "decision" for r in node_copy) == MOVES
    assert any(r["type"] == "stop" and r.get("written_by") == "actor" for r in node_copy)

    # each recording is at the driver, as the node kept it: every frame a journal line names
    # opens (the killed run's too: its restarted actor sent them), frame for frame the node's
    for serial, d in devices.items():
        key = device_key(d["node"], serial)
        here = Recording.open(run_dir / journal_name(key))
        there = Recording.open(tmp_path / "nodes" / run_dir.name / journal_name(key))
        assert here.ids() == there.ids()
        lines = read_journal(run_dir / journal_name(key))
        if key == victim:  # the frames its killed process had not yet written are lost with it
            lines = lines[lines.index(crashed[0]):]
        named = {r["frame"] for r in lines if "frame" in r}
        assert named and named <= set(here.ids()), (serial, sorted(named - set(here.ids())))
        for fid in here.ids()[:: max(1, len(here.ids()) // 5)]:
            assert np.array_equal(here.frame(fid), there.frame(fid))

    # only events came to the driver: a few KB a move, never frames (the recordings: their own count)
    totals = summary["totals"]
    assert totals["moves"] == 4 * MOVES and totals["nodes"] == 2
    assert 0 < totals["bytes_per_move"] < 10_000, totals
    assert totals["recording_bytes_to_driver"] >= sum(
        f.stat().st_size for f in run_dir.glob("*.frames/*") if f.is_file())
    assert totals["calls_to_driver"] < totals["events_to_driver"]  # events go in batches
    # (the rosters' replies count too: the rest of the bytes)
    assert totals["bytes_to_driver"] >= sum(d["bytes_to_driver"] for d in summary["devices"]) > 0
    print(f"\nray farm: {totals['moves']} moves, {totals['bytes_per_move']} bytes/move, "
          f"{totals['decisions_per_s']} decisions/s")  # fmt: skip


def test_a_phone_that_drops_off_its_nodes_adb_server_is_connected_again_on_its_node(cluster, tmp_path):
    """A phone on TCP that its node's adb server loses (Wi-Fi, a restarted emulator) is
    connected again on that node (`adb connect` on the node's own server, by the device
    layer) and plays its moves."""
    import adbutils

    from agent.farm.controller import FarmOptions
    from agent.farm.ray_farm import RayFarm, device_key

    node, serial = cluster.nodes[1], cluster.serials[1][0]
    adb = cluster.adb[1]
    key = device_key(node, serial)
    options = FarmOptions(moves=MOVES, profiles=cluster.profiles, serials=(serial,), backoff_s=(0.5,))
    farm = RayFarm(None, tmp_path / "run", options, node_dir=tmp_path / "nodes")
    dropped: dict = {}

    def drop() -> None:
        if _wait_for(lambda: key in farm.rows and farm.rows[key].moves >= 2, 240):
            adbutils.AdbClient(host=adb.host, port=adb.port).disconnect(serial)
            dropped["moves"] = farm.rows[key].moves

    t = threading.Thread(target=drop, daemon=True)
    t.start()
    summary = farm.run(give_up_after_s=60)
    t.join(5)
    assert dropped, "the phone never made two moves"
    (d,) = summary["devices"]
    # every move made: the device layer connected it again within the run (one retry after
    # a transient fault) or, if that run failed, on the farm's retry
    assert d["state"] == "done" and d["moves"] == MOVES, d
    # connected again on its node's own adb server
    listed = {x.serial: x.state for x in adbutils.AdbClient(host=adb.host, port=adb.port).list()}
    assert listed.get(serial) == "device"


def test_nodes_play_from_the_drivers_profiles_and_what_they_calibrate_comes_back(cluster, tmp_path):
    """A node needs no copy of the profiles at the driver's path: each run plays from a
    folder of its node's own, filled from the driver's; with --calibrate and no profile
    at all, each node calibrates its phone and the profile comes back to the driver."""
    from agent.farm.controller import FarmOptions
    from agent.farm.ray_farm import RayFarm, device_key
    from agent.vision.profile import load_profile

    serials = (cluster.serials[0][0], cluster.serials[1][0])
    mine = tmp_path / "driver-profiles"  # empty: nothing to play from, so calibrate
    options = FarmOptions(moves=2, profiles=mine, serials=serials, calibrate=True)
    summary = RayFarm(None, tmp_path / "run", options, node_dir=tmp_path / "nodes").run(give_up_after_s=60)
    assert all(d["state"] == "done" and d["moves"] == 2 for d in summary["devices"]), summary["devices"]
    (kept,) = mine.glob("*.toml")  # both phones are the same model and size: one profile
    assert load_profile(kept).games
    assert any(e["event"] == "profiles_kept" for e in summary["events"])
    for d in summary["devices"]:
        start = read_journal(tmp_path / "run" / journal_name(device_key(d["node"], d["serial"])))[0]
        # played from its node's own folder, not the driver's
        assert Path(start["profile"]["path"]).is_relative_to(tmp_path / "nodes"), start["profile"]


def test_the_cli_farm_on_the_cluster_then_a_node_that_leaves(cluster, tmp_path):
    """`agent farm --ray ADDRESS --json` from another process plays every node's phones;
    then a node that leaves takes its phones out of the table with the reason."""
    import subprocess
    import sys

    from agent.farm.controller import FarmOptions
    from agent.farm.ray_farm import NODE_LEFT, RayFarm

    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "farm", "--ray", cluster.address, "--moves", "3", "--json", "--record",
         "--runs", str(tmp_path / "runs"), "--profiles", str(cluster.profiles)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout)
    assert len(summary["devices"]) == 4 and all(d["state"] == "done" for d in summary["devices"]), summary["devices"]
    assert {d["node"] for d in summary["devices"]} == set(cluster.nodes)
    assert summary["totals"]["bytes_per_move"] < 10_000
    assert Path(summary["run_dir"], "summary.json").is_file()
    # the recordings came with the run: its report shows every phone's frames, from here
    report = tmp_path / "report.html"
    r = subprocess.run([sys.executable, "-m", "agent.cli", "report", summary["run_dir"], "-o", str(report)],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    page = report.read_text()
    assert page.count("<img") >= 4 * 3 and "no frames recorded" not in page

    # A node leaves mid-run: its phones leave the table's play with the reason; the others play on.
    c, gone = cluster.cluster, cluster.node_objects[1]
    farm = RayFarm(None, tmp_path / "run2", FarmOptions(moves=200, profiles=cluster.profiles),
                   node_dir=tmp_path / "nodes")  # fmt: skip
    seen: dict = {}

    def remove_node() -> None:
        on_gone = lambda: [r for r in farm.rows.values() if r.node == gone.node_id]  # noqa: E731
        if _wait_for(lambda: len(on_gone()) == 2 and all(r.moves >= 1 for r in on_gone()), 240):
            c.remove_node(gone)
            if _wait_for(lambda: all(r.state == NODE_LEFT for r in on_gone()), 120):
                kept = [r for r in farm.rows.values() if r.node != gone.node_id]
                seen["moves"] = {r.key: r.moves for r in kept}
                _wait_for(lambda: all(r.moves > seen["moves"][r.key] for r in kept), 120)
        farm.stop()

    t = threading.Thread(target=remove_node, daemon=True)
    t.start()
    summary = farm.run(give_up_after_s=60)
    t.join(5)
    assert seen, summary["devices"]
    for d in summary["devices"]:
        if d["node"] == gone.node_id:
            assert d["state"] == NODE_LEFT and gone.node_id[:12] in d["last_error"] and "left" in d["last_error"]
        else:
            assert d["state"] == "done" and d["moves"] > 1, d
    assert sum(e["event"] == "node_left" for e in summary["events"]) == 2
