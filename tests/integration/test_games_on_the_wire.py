"""Every game with a simulated phone, through the real adb server: `agent sim serve
--game G` played by `agent play --serial`, and `agent farm --sim N --game G`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.games.registry import simulated
from agent.play.journal import read_journal

pytestmark = pytest.mark.integration


def _agent(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


@pytest.mark.parametrize("game", simulated())
def test_sim_serve_is_played_through_the_adb_server(game, private_adb_port, tmp_path):
    from agent.device.adb import AdbTarget
    from agent.simphone.fleet import SimFleet

    _, port = private_adb_port
    profiles = tmp_path / "profiles"
    with SimFleet(1, AdbTarget("127.0.0.1", port), profiles=profiles, game=game, log_dir=tmp_path / "logs") as fleet:
        r = _agent("play", "--serial", fleet.serials[0], "--game", game, "--moves", "3", "--json",
                   "--profiles", str(profiles), "--runs", str(tmp_path / "runs"))  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["game"] == game and 1 <= out["moves"] <= 3 and out["confirmed"] >= 1
    records = read_journal(out["journal"])
    assert records[0]["type"] == "start" and records[0]["game"] == game
    assert records[0]["device"]["serial"] == fleet.serials[0] and not records[0]["device"]["simulated"]
    assert records[-1]["type"] == "stop"
    assert json.loads((Path(out["journal"]).parent / "summary.json").read_text())["moves"] == out["moves"]


@pytest.mark.parametrize("game", simulated())
def test_farm_of_simulated_phones_plays_every_game(game, private_adb_port, tmp_path):
    r = _agent("farm", "--sim", "2", "--game", game, "--moves", "3", "--json",
               "--runs", str(tmp_path / "runs"), "--profiles", str(tmp_path / "profiles"))  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout)
    assert summary["totals"]["devices"] == 2
    assert all(d["state"] == "done" and 1 <= d["moves"] <= 3 for d in summary["devices"]), summary["devices"]
    for path in sorted(Path(summary["run_dir"]).glob("*.jsonl")):
        records = read_journal(path)
        assert records[0]["type"] == "start" and records[0]["game"] == game, path
        assert records[-1]["type"] == "stop", path


def test_calibrate_learns_from_several_still_frames_of_a_phone_then_plays(private_adb_port, tmp_path):
    """`agent calibrate --serial S --frames 2` on a phone served on the wire (no profile
    given to it), then `agent play` with the profile it wrote."""
    from agent.device.adb import AdbTarget
    from agent.simphone.fleet import SimFleet

    _, port = private_adb_port
    profiles = tmp_path / "profiles"
    with SimFleet(1, AdbTarget("127.0.0.1", port), profiles=tmp_path / "sim-profiles", game="match3",
                  log_dir=tmp_path / "logs") as fleet:  # (its own profile goes elsewhere: calibration writes one)
        serial = fleet.serials[0]
        cal = _agent("calibrate", "--serial", serial, "--frames", "2", "--every", "0.2", "--json",
                     "--profiles", str(profiles))  # fmt: skip
        assert cal.returncode == 0, cal.stderr[-3000:]
        out = json.loads(cal.stdout)
        assert out["frames"] == 2 and out["rows"] == 8 and "?" not in {v for row in out["cells"] for v in row}
        assert {c["role"] for c in out["classes"]} <= {"tile", "special"}
        r = _agent("play", "--serial", serial, "--moves", "2", "--json", "--profiles", str(profiles),
                   "--runs", str(tmp_path / "runs"))  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)["confirmed"] >= 1
