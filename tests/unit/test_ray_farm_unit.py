"""The Ray farm's parts that need no cluster: roster diffing, the driver's accounting of
events (journal lines, bytes), nodes that left, and the command line's errors."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent
from agent.errors import AgentError
from agent.farm.controller import DeviceRow, Farm, FarmOptions
from agent.farm.roster import roster_diff
from agent.farm.ray_farm import (
    NODE_LEFT, EventMeter, RayFarm, check_address, device_key, event_bytes, import_ray, nodes_left,
)  # fmt: skip
from agent.play.journal import journal_name, read_journal

ROOT = Path(agent.__file__).parent


def test_roster_diff_names_the_phones_that_came_and_went():
    old = [{"serial": "a", "state": "device"}, {"serial": "b", "state": "device"}]
    new = [{"serial": "b", "state": "offline"}, {"serial": "c", "state": "device"}]
    joined, left = roster_diff(old, new)
    assert [d["serial"] for d in joined] == ["c"] and [d["serial"] for d in left] == ["a"]
    assert roster_diff(new, new) == ([], [])  # a change of state is neither
    assert roster_diff([], new)[0] == new


def test_a_device_is_its_node_and_its_serial():
    node = "ab" * 28
    assert device_key(node, "127.0.0.1:5555") == "abababababab/127.0.0.1:5555"
    assert device_key(node, "x") != device_key("cd" * 28, "x")
    assert journal_name(device_key(node, "127.0.0.1:5555")) == "abababababab_127.0.0.1_5555.jsonl"


def test_the_meter_counts_the_compact_json_of_every_event():
    m = EventMeter()
    e1 = {"kind": "status", "key": "k1", "moves": 1}
    e2 = {"kind": "journal", "key": "k2", "line": {"type": "decision", "board": "AB/CD"}}
    m.count(e1)
    m.count(e2)
    m.count({"kind": "roster", "devices": []})
    assert m.total == event_bytes(e1) + event_bytes(e2) + event_bytes({"kind": "roster", "devices": []})
    assert event_bytes(e1) == len('{"kind":"status","key":"k1","moves":1}')
    assert m.by_key["k1"] == event_bytes(e1) and m.events == 3
    assert m.per_move(0) is None and m.per_move(2) == round(m.total / 2, 1)


def test_rows_on_a_node_that_is_not_alive_any_more():
    rows = [DeviceRow("n1/a", "127.0.0.1", 5037, "a", node="n1"), DeviceRow("n2/b", "127.0.0.1", 5037, "b", node="n2"),
            DeviceRow("n2/c", "127.0.0.1", 5037, "c", node="n2", state="done")]  # fmt: skip
    assert [r.key for r in nodes_left(rows, {"n1": "10.0.0.1"})] == ["n2/b"]  # done stays done
    assert nodes_left(rows, {"n1": "x", "n2": "y"}) == []


def _driver(tmp_path, alive: dict[str, str]) -> RayFarm:
    """The driver's side of a Ray farm without a cluster: what it does with the events it
    receives (the farm's Ray calls are not made)."""
    farm = RayFarm.__new__(RayFarm)
    Farm.__init__(farm, [], tmp_path / "run", FarmOptions(moves=5, settings={"x": 1}), list_fn=lambda t: [])
    farm._driver_state()
    farm.alive, farm._nodes_fn, farm._last_nodes = alive, lambda: alive, 0.0
    farm.address, farm.driver_node = "127.0.0.1:6379", "d" * 56
    farm.run_dir.mkdir(parents=True)
    return farm


def test_the_driver_writes_each_journal_from_its_lines_and_counts_what_was_made(tmp_path):
    farm = _driver(tmp_path, {"n1": "10.0.0.1"})
    row = farm.rows["n1/a"] = DeviceRow("n1/a", "127.0.0.1", 5037, "a", node="n1")
    lines = [{"type": "start", "game": "match3"}, {"type": "decision", "move": [0, 1]},
             {"type": "check", "ok": True}, {"type": "decision", "move": [2, 3]}]  # fmt: skip
    farm._handle({"kind": "actor", "key": "n1/a", "node_id": "n1", "pid": 123, "reconstructed": False})
    for line in lines:
        farm._handle({"kind": "journal", "key": "n1/a", "line": line})
    farm._handle({"kind": "status", "key": "n1/a", "moves": 1, "confirmed": 1, "score": None, "counts": {}, "fps": 2.0})
    assert read_journal(farm.run_dir / journal_name("n1/a")) == lines
    assert farm.actor_info["n1/a"] == {"node_id": "n1", "pid": 123, "reconstructed": False}
    # the process died after its second decision line, before that move's status line
    assert row.moves == 1
    farm._count_made(row)
    assert row.moves == 2
    farm._end_journal(row, "the phone's actor died before its stop line", "crashed")
    last = read_journal(farm.run_dir / journal_name("n1/a"))[-1]
    assert last["type"] == "stop" and last["kind"] == "crashed" and last["written_by"] == "farm"
    # a journal line of a device the farm does not know is not written anywhere
    farm._handle({"kind": "journal", "key": "n9/z", "line": {"type": "start"}})
    assert sorted(p.name for p in farm.run_dir.iterdir()) == [journal_name("n1/a")]


class _DeadActorRay:
    """Ray as the driver sees it while a phone's actor process is dead or being restarted:
    every call's result is that error."""

    def get(self, ref, timeout=None):
        raise RuntimeError("The actor died unexpectedly before finishing this task.\nmore")


class _Calls:
    def __getattr__(self, name):
        return type("Method", (), {"remote": staticmethod(lambda *a: object())})()


def test_a_run_whose_actor_died_before_it_began_is_told_apart_from_one_that_played(tmp_path):
    from agent.farm.ray_farm import _ActorRun

    farm = _driver(tmp_path, {"n1": "10.0.0.1"})
    farm.ray, farm.inbox, farm.node_dir = _DeadActorRay(), _Calls(), tmp_path / "nodes"
    row = farm.rows["n1/a"] = DeviceRow("n1/a", "127.0.0.1", 5037, "a", node="n1", state="playing", runs=1)
    farm.actors["n1/a"] = _Calls()
    farm._run_decisions["n1/a"], farm._run_lines["n1/a"] = 0, 0
    # the first run played (a start line and a move), then its process was killed
    for line in ({"type": "start"}, {"type": "decision"}):
        farm._handle({"kind": "journal", "key": "n1/a", "line": line})
    farm._ended(row, _ActorRun(farm.actors["n1/a"], object(), 0.0))
    assert [e["event"] for e in farm.events if e["event"] in ("actor_died", "run_not_started")] == ["actor_died"]
    assert row.state == "retrying" and row.moves == 1
    # the retry's call came while Ray still restarted the process: it never reached the phone
    row.state, row.runs = "rejoining", 2
    farm._run_decisions["n1/a"], farm._run_lines["n1/a"] = 0, 0
    farm._ended(row, _ActorRun(farm.actors["n1/a"], object(), 0.0))
    kinds = [e["event"] for e in farm.events if e["event"] in ("actor_died", "run_not_started")]
    assert kinds == ["actor_died", "actor_died", "run_not_started"]
    records = read_journal(farm.run_dir / journal_name("n1/a"))
    assert sum(r["type"] == "start" for r in records) == row.runs - kinds.count("run_not_started")
    assert [r["type"] for r in records] == ["start", "decision", "stop"]  # one stop line, not two


def test_a_node_that_left_takes_its_phones_out_with_the_reason(tmp_path):
    farm = _driver(tmp_path, {"n1": "10.0.0.1", "n2": "10.0.0.2"})
    farm.rows["n1/a"] = DeviceRow("n1/a", "127.0.0.1", 5037, "a", node="n1", state="playing")
    farm.rows["n2/b"] = DeviceRow("n2/b", "127.0.0.1", 5037, "b", node="n2", state="playing")
    farm._nodes_fn = lambda: {"n1": "10.0.0.1"}
    farm._check_nodes()
    b = farm.rows["n2/b"]
    assert b.state == NODE_LEFT and "n2" in b.last_error and "10.0.0.2" in b.last_error and "left" in b.last_error
    assert farm.rows["n1/a"].state == "playing"
    assert [e["event"] for e in farm.events] == ["node_left"]
    farm.rows["n1/a"].state = "done"
    assert farm.finished  # node_left is an end, as done is


def test_the_summary_has_the_node_and_the_bytes(tmp_path):
    farm = _driver(tmp_path, {"n1": "10.0.0.1"})
    farm.rows["n1/a"] = DeviceRow("n1/a", "127.0.0.1", 5037, "a", node="n1", state="done", moves=4,
                                  decision_ms=[10.0, 20.0, 30.0])  # fmt: skip
    farm._handle({"kind": "journal", "key": "n1/a", "line": {"type": "decision"}})
    s = farm.summary()
    (dev,) = s["devices"]
    assert dev["node"] == "n1" and dev["bytes_to_driver"] == farm.meter.total and dev["decision_ms_median"] == 20.0
    assert s["totals"]["bytes_to_driver"] == farm.meter.total
    assert s["totals"]["bytes_per_move"] == round(farm.meter.total / 4, 1)
    assert s["ray"]["nodes"] == {"n1": {"address": "10.0.0.1", "phones": 1}}
    json.dumps(s)
    # a local farm's rows have no node field: its summary is as before
    assert "node" not in DeviceRow("h:1/a", "h", 1, "a").as_dict()


def test_ray_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if not installed
    with pytest.raises(AgentError) as err:
        import_ray()
    assert "not installed" in str(err.value) and 'pip install ".[ray]"' in err.value.hint


def _env() -> dict[str, str]:
    # The code under test, whatever the folder the command runs in (an editable install
    # may point at another checkout).
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")])}


def _agent(*args: str, prelude: str = "", cwd: Path) -> subprocess.CompletedProcess:
    code = f"import sys\n{prelude}\nfrom agent.cli import main\nsys.argv = ['agent', *{list(args)!r}]\nmain()\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=_env(), cwd=cwd)  # fmt: skip


def test_cli_ray_without_ray_installed_says_how_to_install_it(tmp_path):
    r = _agent("farm", "--ray", "auto", "--runs", str(tmp_path), prelude="sys.modules['ray'] = None", cwd=tmp_path)
    assert r.returncode != 0
    assert "not installed" in r.stderr and 'pip install ".[ray]"' in r.stderr and "Traceback" not in r.stderr


def test_cli_ray_at_an_address_nobody_answers_at(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    r = _agent("farm", "--ray", f"127.0.0.1:{port}", "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert r.returncode != 0
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in r.stderr and "Traceback" not in r.stderr
    r = _agent("farm", "--ray", "nonsense", "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert r.returncode == 2 and "--ray 'nonsense' is not an address" in r.stderr and "Traceback" not in r.stderr
    assert not list((tmp_path / "runs").glob("*"))  # no run folder left behind
    r = _agent("farm-node", "--address", "nonsense", "--no-start", cwd=tmp_path)  # (the node's option is named)
    assert r.returncode == 2 and "--address 'nonsense' is not an address" in r.stderr and "Traceback" not in r.stderr


def test_cli_ray_refuses_this_machines_phone_options(tmp_path):
    r = _agent("farm", "--ray", "auto", "--sim", "2", "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert r.returncode == 2 and "--sim" in r.stderr and "agent farm-node" in r.stderr


def test_check_address_needs_host_and_port():
    for bad in ("", "host", "host:0", "host:99999", ":6379"):
        with pytest.raises(AgentError):
            check_address(bad)


def test_the_local_farm_imports_no_ray():
    """Without --ray the farm runs with no Ray installed: neither the modules nor a run
    of the command line's farm module import it."""
    for name in ("farm/controller.py", "farm/worker.py", "farm/view.py", "cli/farm.py", "play/run.py"):
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
        assert not {m for m in names if m == "ray" or m.startswith(("ray.", "agent.farm.ray"))}, name
    code = ("import sys; sys.modules['ray'] = None\n"
            "import agent.cli, agent.farm.controller, agent.farm.worker, agent.farm.ray_farm\n"
            "assert sys.modules['ray'] is None and 'agent.farm.ray_actor' not in sys.modules")  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env())
    assert r.returncode == 0, r.stderr


def test_the_live_table_has_a_node_column_on_ray_only(tmp_path):
    from agent.cli.farm import farm_table

    farm = _driver(tmp_path, {"n1": "10.0.0.1"})
    farm.rows["abcdefabcdef/s1"] = DeviceRow("abcdefabcdef/s1", "127.0.0.1", 5037, "s1", node="abcdefabcdef" + "0" * 44)
    table = farm_table(farm)
    assert [c.header for c in table.columns][:2] == ["node", "device"]
    assert list(table.columns[0].cells) == ["abcdefabcdef"] and list(table.columns[1].cells) == ["s1"]
    local = Farm([object()], tmp_path / "local", FarmOptions(moves=5, settings={"x": 1}), list_fn=lambda t: [])
    local.rows["h:1/s"] = DeviceRow("h:1/s", "h", 1, "s")
    assert [c.header for c in farm_table(local).columns][0] == "device"


def test_a_phone_whose_run_ended_without_doing_what_was_asked_is_no_phone_done(tmp_path):
    """A phone whose game was over before its first move ("done" with 0 moves, exit 0 for
    the farm, where `agent play` on it exits non-zero): its row fails with the stop reason
    and the exit code `agent play` would give; one that played is done."""
    from agent.farm.controller import Farm

    farm = Farm([], tmp_path, list_fn=lambda t: [])
    farm.rows["a"] = DeviceRow("a", "127.0.0.1", 5037, "a", state="playing")
    farm.rows["b"] = DeviceRow("b", "127.0.0.1", 5037, "b", state="playing")
    base = {"counts": {}, "decision_ms": [], "elapsed_s": 1.0}
    over = {"moves": 0, "confirmed": 0, "score": None, "stop_reason": "game over: no moves left"}
    farm._handle({"kind": "done", "key": "a", "summary": over, "exit_code": 1, **base})
    played = {"moves": 20, "confirmed": 20, "score": 900, "stop_reason": "move limit reached (20)"}
    farm._handle({"kind": "done", "key": "b", "summary": played, "exit_code": 0, **base})
    a, b = farm.rows["a"], farm.rows["b"]
    assert a.state == "failed" and "game over: no moves left" in a.last_error and a.as_dict()["exit_code"] == 1
    assert b.state == "done" and b.as_dict()["exit_code"] == 0 and b.last_error == ""
