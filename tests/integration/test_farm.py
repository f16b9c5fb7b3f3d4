"""`agent farm` through real adb servers and simulated phones on the wire (integration)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.games.match3.game import GAME
from agent.play.journal import read_journal
from agent.play.recording import Recording

pytestmark = pytest.mark.integration


def journals(run_dir: Path) -> dict[str, list[dict]]:
    return {p.name: read_journal(p) for p in sorted(run_dir.glob("*.jsonl"))}


def check_consistent(summary: dict, run_dir: Path) -> None:
    """summary.json agrees with the journals, device by device."""
    on_disk = json.loads((run_dir / "summary.json").read_text())
    assert on_disk["totals"] == summary["totals"]
    logs = journals(run_dir)
    for dev in summary["devices"]:
        name = next(n for n in logs if dev["serial"].replace(":", "_").replace(".", ".") in n)
        decisions = [r for r in logs[name] if r["type"] == "decision"]
        assert len(decisions) == dev["moves"], name
    assert summary["totals"]["moves"] == sum(d["moves"] for d in summary["devices"])


def test_farm_of_four_sim_phones(private_adb_port, tmp_path):
    env = dict(os.environ)
    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "farm", "--sim", "4", "--moves", "8", "--json", "--record",
         "--runs", str(tmp_path / "runs"), "--profiles", str(tmp_path / "profiles")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout)
    assert summary["totals"]["devices"] == 4
    assert all(d["state"] == "done" and d["moves"] == 8 for d in summary["devices"]), summary["devices"]
    assert all(d["model"] == "puzzle-sim" for d in summary["devices"])
    run_dir = Path(summary["run_dir"])
    check_consistent(summary, run_dir)
    for name, records in journals(run_dir).items():
        assert records[0]["type"] == "start" and records[-1]["type"] == "stop", name
        assert records[-1]["reason"] == "move limit reached (8)"
        # --record: every decision's frame kept beside its device's journal, and it reads as journaled
        recording = Recording.open(run_dir / name)
        profile = recording.profile_at(records[0]["profile"]["snapshot"])
        decisions = [r for r in records if r["type"] == "decision"]
        assert len(decisions) == 8
        for r in decisions:
            assert GAME.screen.read(recording.frame(r["frame"]), profile).text == r["board"], name


def _farm_in_process(target, fleet, tmp_path, moves, **kw):
    from agent.farm.controller import Farm, FarmOptions

    options = FarmOptions(moves=moves, profiles=fleet.profiles, serials=tuple(fleet.serials), **kw)
    return Farm([target], tmp_path / "run", options)


def _wait_for(cond, timeout_s: float) -> bool:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if cond():
            return True
        time.sleep(0.1)
    return False


def _target(port):
    from agent.device.adb import AdbTarget

    return AdbTarget("127.0.0.1", port)


def test_dead_phone_is_retried_and_rejoins_when_it_comes_back(private_adb_port, tmp_path):
    from agent.simphone.fleet import SimFleet

    _, port = private_adb_port
    target = _target(port)
    with SimFleet(3, target, profiles=tmp_path / "profiles", log_dir=tmp_path / "logs") as fleet:
        farm = _farm_in_process(target, fleet, tmp_path, moves=12, max_failures=5, backoff_s=(1.0, 2.0))
        victim = f"127.0.0.1:{port}/{fleet.serials[0]}"

        def inject():
            _wait_for(lambda: victim in farm.rows and farm.rows[victim].moves >= 2, 120)
            fleet.kill(0)
            _wait_for(lambda: farm.rows[victim].total_failures >= 1, 60)
            fleet.restart(0)  # back on the same port, before quarantine

        t = threading.Thread(target=inject, daemon=True)
        t.start()
        summary = farm.run()
        t.join(5)
    rows = {d["serial"]: d for d in summary["devices"]}
    assert all(d["state"] == "done" and d["moves"] == 12 for d in rows.values()), rows
    assert rows[fleet.serials[0]]["failures"] >= 1 and rows[fleet.serials[0]]["runs"] >= 2
    kinds = [e["event"] for e in summary["events"] if e.get("key") == victim]
    assert "error" in kinds and "retry_scheduled" in kinds
    # the journal kept what happened before the phone died, and what came after
    log = journals(tmp_path / "run")
    victim_log = next(v for k, v in log.items() if str(fleet.ports[0]) in k)
    assert sum(r["type"] == "decision" for r in victim_log) == 12
    assert sum(r["type"] == "start" for r in victim_log) >= 2


def test_phone_that_stays_dead_is_quarantined_and_others_finish(private_adb_port, tmp_path):
    from agent.simphone.fleet import SimFleet

    _, port = private_adb_port
    target = _target(port)
    with SimFleet(2, target, profiles=tmp_path / "profiles", log_dir=tmp_path / "logs") as fleet:
        farm = _farm_in_process(target, fleet, tmp_path, moves=10, max_failures=2, backoff_s=(0.5,))
        victim = f"127.0.0.1:{port}/{fleet.serials[1]}"
        t = threading.Thread(
            target=lambda: (_wait_for(lambda: victim in farm.rows and farm.rows[victim].moves >= 1, 120),
                            fleet.kill(1)),
            daemon=True,
        )  # fmt: skip
        t.start()
        summary = farm.run()
        t.join(5)
    rows = {d["serial"]: d for d in summary["devices"]}
    assert rows[fleet.serials[0]]["state"] == "done" and rows[fleet.serials[0]]["moves"] == 10
    assert rows[fleet.serials[1]]["state"] == "quarantined"
    assert rows[fleet.serials[1]]["last_error"]
    # what the phone showed before it died: its last frames, named where it was quarantined
    quarantined = next(e for e in summary["events"] if e["event"] == "quarantined")
    assert quarantined["frames"] and all(Path(f).is_file() for f in quarantined["frames"])


def test_two_adb_servers_driven_by_one_farm(private_adb_port, tmp_path):
    from agent.device.adb import stop_server
    from agent.simphone.fleet import SimFleet
    from agent.simphone.launch import free_port

    _, port1 = private_adb_port
    t1, t2 = _target(port1), _target(free_port())
    try:
        with SimFleet(2, t1, profiles=tmp_path / "profiles", log_dir=tmp_path / "l1") as f1, \
             SimFleet(2, t2, profiles=tmp_path / "profiles", log_dir=tmp_path / "l2", base_seed=10) as f2:  # fmt: skip
            r = subprocess.run(
                [sys.executable, "-m", "agent.cli", "farm", "--adb", f"127.0.0.1:{port1}", "--adb",
                 f"127.0.0.1:{t2.port}", "--moves", "5", "--json", "--runs", str(tmp_path / "runs"),
                 "--profiles", str(tmp_path / "profiles")],
                capture_output=True, text=True, timeout=600, env=dict(os.environ),
            )  # fmt: skip
            assert r.returncode == 0, r.stderr[-3000:]
            summary = json.loads(r.stdout)
            servers = {d["adb"] for d in summary["devices"]}
            assert servers == {f"127.0.0.1:{port1}", f"127.0.0.1:{t2.port}"}
            assert len(summary["devices"]) == 4
            assert all(d["state"] == "done" and d["moves"] == 5 for d in summary["devices"])
            assert set(f1.serials) | set(f2.serials) == {d["serial"] for d in summary["devices"]}
    finally:
        stop_server(t2)


def test_farm_with_no_devices_says_so(private_adb_port, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "farm", "--json", "--runs", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )
    assert r.returncode != 0
    assert "no devices to farm" in r.stderr and "Traceback" not in r.stderr


def test_ctrl_c_stops_every_worker_cleanly_and_keeps_the_journals(private_adb_port, tmp_path):
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "farm", "--sim", "2", "--json", "--runs", str(tmp_path / "runs"),
         "--profiles", str(tmp_path / "profiles")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip

    def decisions() -> int:
        return sum(
            1 for p in (tmp_path / "runs").glob("*/*.jsonl") for line in p.read_text().splitlines() if '"decision"' in line
        )

    try:
        assert _wait_for(lambda: decisions() >= 4, 180), "the farm never got going"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Ctrl-C exits 130, as `agent play` does, once the journals and summary are written.
    assert proc.returncode == 130, err[-3000:]
    summary = json.loads(out)
    assert len(summary["devices"]) == 2 and any(e["event"] == "interrupted" for e in summary["events"])
    assert summary["interrupted"] is True and summary["signal"] == "SIGINT"
    run_dir = Path(summary["run_dir"])
    check_consistent(summary, run_dir)
    for name, records in journals(run_dir).items():
        assert records[-1]["type"] == "stop" and records[-1]["reason"] == "stopped on request", name
    # the phones the farm started are gone with it
    left = subprocess.run(["pgrep", "-f", f"sim serve.*{tmp_path / 'profiles'}"], capture_output=True, text=True)
    assert left.stdout.strip() == ""


def test_a_phone_without_a_profile_is_skipped_or_calibrated_first(private_adb_port, tmp_path):
    """The phones write their profiles to one folder; the farm looks in another, empty one.
    Without --calibrate each phone is skipped with a fix; with it, each is calibrated on its
    own screen (profile and overlay written), then played."""
    from agent.farm.controller import Farm, FarmOptions
    from agent.simphone.fleet import SimFleet
    from agent.vision.profile import load_profile

    _, port = private_adb_port
    target = _target(port)
    farm_profiles = tmp_path / "farm-profiles"
    with SimFleet(2, target, profiles=tmp_path / "phone-profiles", log_dir=tmp_path / "logs") as fleet:
        serials = tuple(fleet.serials)
        skipped = Farm([target], tmp_path / "run1", FarmOptions(moves=4, profiles=farm_profiles, serials=serials)).run()
        assert all(d["state"] == "skipped" for d in skipped["devices"]), skipped["devices"]
        assert all("calibrate" in d["last_error"] or "profile" in d["last_error"] for d in skipped["devices"])
        played = Farm([target], tmp_path / "run2",
                      FarmOptions(moves=4, profiles=farm_profiles, serials=serials, calibrate=True)).run()
    assert all(d["state"] == "done" and d["moves"] == 4 for d in played["devices"]), played["devices"]
    (written,) = sorted(farm_profiles.glob("*.toml"))  # both phones are one model at one size
    profile = load_profile(written).games["match3"]
    assert (profile.rows, profile.cols) == (8, 8)
    assert sorted(farm_profiles.glob("*.png"))  # the overlay, for a person to check
    assert sum(e["event"] == "calibrated" for e in played["events"]) >= 1
