"""Recordings are untrusted input (issue 26): one may come from another machine or a bug
report. `agent replay` and `agent report` on a copy of a committed recording (the
simulated phone's, tests/data/recordings/match3) that was damaged on purpose:

- damaged index lines (not UTF-8, random bytes, not an object, wrong types, a box off
  its frame) lose only themselves: skipped, named and counted, the other frames serve;
- no path a recording names (a frame file, a profile snapshot, a stop's frames) is read
  outside its run folder: no `..`, no absolute path, no symlink leading out;
- a torn journal is said by replay (exit 1, "incomplete"), never "same";
- a start line that lacks an option is replayed with the game's default, said.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.errors import AgentError
from agent.play.recording import INDEX, Recording

from redteam import ROOT, agent, assert_handled

SOURCE = ROOT / "tests" / "data" / "recordings" / "match3"
JOURNAL = "sim-0.jsonl"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    if not SOURCE.is_dir():
        pytest.skip(f"no committed recording at {SOURCE}")
    out = tmp_path / "run"
    shutil.copytree(SOURCE, out)
    return out


def index_of(run: Path) -> Path:
    return run / "sim-0.frames" / INDEX


def assert_result(r, code: int, says: tuple[str, ...]) -> None:
    """A replay's result (not an error): its exit code, no traceback, and what it says."""
    assert r.code == code and "Traceback" not in r.text, r.describe()
    for word in says:
        assert word in r.text, f"does not say {word!r}\n{r.describe()}"


def test_the_recording_as_committed_replays_the_same(run):
    r = agent("replay", str(run), cwd=run.parent)
    assert_result(r, 0, ("same:",))


DAMAGE = [
    (b"\xff\xfe not utf-8 \xc3\x28\n", "not UTF-8"),
    (bytes(range(11, 256)) + b"\x00\x01\n", "not UTF-8"),
    (b"[1, 2, 3]\n", "not an object"),
    (b'{"id": "seven", "file": "000000.jpg"}\n', "not an integer"),
    (b'{"id": 90, "file": 12}\n', "not a file name"),
    (b'{"id": 91, "file": "000001.jpg", "base": 0, "box": [400, 100, 10, 20]}\n', "empty or off the frame"),
    (b'{"id": 92, "file": "000001.jpg", "base": 0, "box": [1, 2, 3]}\n', "not [x0, y0, x1, y1]"),
    (b'{"id": 93, "file": "000000.jpg", "base": 0}\n', "both its base and its box"),
]


@pytest.mark.parametrize("line, says", DAMAGE, ids=[d[1] for d in DAMAGE])
def test_a_damaged_index_line_is_skipped_named_and_counted_and_the_rest_serve(run, line, says):
    index = index_of(run)
    lines = index.read_bytes().splitlines(keepends=True)
    index.write_bytes(b"".join(lines[:3]) + line + b"".join(lines[3:]))
    rec = Recording.open(run / JOURNAL)
    assert len(rec.entries) == len(lines) and len(rec.damaged) == 1
    assert rec.damaged[0].startswith("index line 4:") and says in rec.damaged[0], rec.damaged
    assert rec.frame(max(rec.entries)).shape[2] == 3  # a frame after the damaged line still serves
    r = agent("replay", str(run), cwd=run.parent)
    assert_result(r, 1, ("incomplete:", "index line 4"))
    r = agent("report", str(run), "-o", str(run.parent / "report.html"), cwd=run.parent)
    assert_handled(r, 0)
    page = (run.parent / "report.html").read_text()
    assert "1 damaged line of the recording" in page and "index line 4" in page


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.lists(st.binary(max_size=120), min_size=1, max_size=6))
def test_whatever_bytes_an_index_holds_opening_it_names_them_and_never_raises_anything_else(run, junk):
    index = index_of(run)
    good = SOURCE.joinpath("sim-0.frames", INDEX).read_bytes()
    index.write_bytes(b"\n".join(junk) + b"\n" + good)
    rec = Recording.open(run / JOURNAL)
    assert len(rec.entries) >= len(good.splitlines()) - 0  # every good line kept (a junk one may name an id too)
    for fid in rec.ids():
        try:
            rec.frame(fid)
        except AgentError:
            pass  # a junk line that parsed names a frame that is not there: said, never a crash


def test_a_box_beyond_its_key_frame_is_said_not_pasted(run):
    index = index_of(run)
    entries = [json.loads(x) for x in index.read_text().splitlines()]
    part = next(e for e in entries if e["base"] is not None)
    part["box"] = [0, 0, 5000, 9000]
    index.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    with pytest.raises(AgentError, match="does not fit its key frame"):
        Recording.open(run / JOURNAL).frame(part["id"])


@pytest.mark.parametrize("where", ["dotdot", "absolute", "symlink"])
def test_a_frame_file_outside_the_run_folder_is_never_read(run, tmp_path, where):
    outside = tmp_path / "secret.jpg"
    shutil.copy(run / "sim-0.frames" / "000000.jpg", outside)
    index = index_of(run)
    entries = [json.loads(x) for x in index.read_text().splitlines()]
    name = {"dotdot": "../../secret.jpg", "absolute": str(outside), "symlink": "link.jpg"}[where]
    if where == "symlink":
        (run / "sim-0.frames" / "link.jpg").symlink_to(outside)
    entries[0]["file"] = name
    index.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    with pytest.raises(AgentError, match="lies outside"):
        Recording.open(run / JOURNAL).frame(0)
    r = agent("replay", str(run), cwd=run.parent)
    assert_handled(r, (1, 2), "outside")


def test_a_profile_snapshot_outside_the_run_folder_is_never_read(run, tmp_path):
    journal = run / JOURNAL
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    snapshot = lines[0]["profile"]["snapshot"]
    shutil.copy(run / snapshot, tmp_path / "elsewhere.toml")
    lines[0]["profile"]["snapshot"] = "../elsewhere.toml"
    journal.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = agent("replay", str(run), cwd=run.parent)
    assert_handled(r, 2, "outside")


def test_a_stop_naming_a_frame_outside_the_run_folder_is_not_put_in_the_report(run, tmp_path):
    outside = tmp_path / "private.jpg"
    shutil.copy(run / "sim-0.frames" / "000000.jpg", outside)
    journal = run / JOURNAL
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    lines[-1]["frames"] = [str(outside)]
    journal.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = agent("report", str(run), "-o", str(tmp_path / "r.html"), cwd=tmp_path)
    assert_handled(r, 0)
    assert "is not in the run folder" in (tmp_path / "r.html").read_text()


def test_a_torn_journal_is_said_by_replay_never_same(run):
    journal = run / JOURNAL
    text = journal.read_text()
    journal.write_text(text[: text.rstrip("\n").rfind("\n") + 1] + '{"type": "check", "index": 9, "verd')
    r = agent("replay", str(run), cwd=run.parent)
    assert_result(r, 1, ("incomplete:", "torn"))
    assert "same:" not in r.out


def test_a_start_line_without_an_option_is_replayed_with_the_default_said(run):
    journal = run / JOURNAL
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    del lines[0]["options"]["variant"]
    journal.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    r = agent("replay", str(run), "--json", cwd=run.parent)
    assert r.code in (0, 1) and "Traceback" not in r.text, r.describe()
    assert any("names no" in n and "variant" in n and "default" in n for n in json.loads(r.out)["notes"])
