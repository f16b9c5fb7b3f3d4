"""Recordings: the frames a run's decisions were made on, kept beside its journal and read
back as they were; the last few kept whenever a run stops on a failure."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.device.clock import ManualClock
from agent.errors import AgentError
from agent.games.match3.game import GAME, Match3Player
from agent.games.match3.sim import SimPhone
from agent.games.match3.sim_profile import sim_game_profile
from agent.games.match3.solver import GreedySolver
from agent.play.journal import Journal, last_stop_frames, read_journal
from agent.play.loop import PlayLoop, PlayOptions
from agent.play.recording import KEY_EVERY, RING_FRAMES, Recorder, Recording, RecordOptions, frames_dir

runner = CliRunner()


def frames(n: int, seed: int = 0) -> list[np.ndarray]:
    """A textured screen whose lower half changes from one frame to the next, as a board does."""
    rng = np.random.default_rng(seed)
    base = cv2.GaussianBlur(rng.integers(0, 256, (240, 120, 3), dtype=np.uint8), (7, 7), 0)
    out = []
    for i in range(n):
        f = base.copy()
        patch = cv2.GaussianBlur(rng.integers(0, 256, (30, 90, 3), dtype=np.uint8), (7, 7), 0)
        f[120 + (i % 5) * 10 : 150 + (i % 5) * 10, 10:100] = patch
        out.append(f)
    return out


def test_frames_come_back_as_recorded_whole_or_as_their_changed_box(tmp_path):
    shots = frames(12)
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(lossless=True))
    ids = [rec.add(f, "rest", float(i), i) for i, f in enumerate(shots)]
    stats = rec.close()
    assert ids == list(range(12)) and stats.frames == 12
    back = Recording.open(tmp_path / "p.jsonl")
    assert back.ids() == ids
    for i, f in zip(ids, shots):
        np.testing.assert_array_equal(back.frame(i), f)
    # only the first is whole: the others are the box that changed, pasted on it
    kinds = [(e.base, e.box is None) for e in back.entries.values()]
    assert kinds[0] == (None, True) and all(base == 0 and not whole for base, whole in kinds[1:])
    stored = sum(p.stat().st_size for p in frames_dir(tmp_path / "p.jsonl").glob("0*.png"))
    assert stored < 4 * shots[0].nbytes  # twelve frames in the room of a few


def test_jpeg_frames_of_a_phone_read_as_the_captured_ones(tmp_path):
    phone = SimPhone(seed=5, clock=ManualClock())
    profile = sim_game_profile(phone)
    shots = [phone.screencap()]
    phone.swipe(*_a_legal_swipe(phone, profile))
    phone.clock.sleep(5.0)
    shots.append(phone.screencap())
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(quality=90))
    for i, f in enumerate(shots):
        rec.add(f, "rest", float(i))
    rec.close()
    back = Recording.open(tmp_path / "p.jsonl")
    assert back.entries[1].base == 0  # the swipe changed the board, not the whole screen
    for i, f in enumerate(shots):
        assert np.abs(back.frame(i).astype(int) - f).mean() < 3  # lossy, and close
        assert GAME.screen.read(back.frame(i), profile).text == GAME.screen.read(f, profile).text
    assert GAME.screen.read(shots[0], profile).text != GAME.screen.read(shots[1], profile).text


def _a_legal_swipe(phone: SimPhone, profile) -> tuple[int, int, int, int]:
    player = Match3Player(phone.config, GreedySolver())
    decision = player.decide(GAME.screen.read(phone.screencap(), profile).board)
    g = GAME.screen.gestures(decision.move, profile)[0]
    return g.x1, g.y1, g.x2, g.y2


def test_the_same_frame_twice_is_one_id_and_an_unchanged_screen_costs_no_file(tmp_path):
    f = frames(1)[0]
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(lossless=True))
    assert rec.add(f, "rest", 0.0) == rec.add(f, "rest", 1.0) == 0
    assert rec.add(f.copy(), "rest", 2.0) == 1
    rec.close()
    back = Recording.open(tmp_path / "p.jsonl")
    assert back.entries[1].file == back.entries[0].file
    assert len(list(frames_dir(tmp_path / "p.jsonl").glob("0*.png"))) == 1


def test_a_frame_wanted_lossless_after_it_was_kept_lossy_is_kept_again_lossless(tmp_path):
    f = frames(1)[0]
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(quality=80))
    assert rec.add(f, "rest", 0.0) == 0
    assert rec.add(f, "screen", 0.0) == 1  # a dialog or a new board read on it: every pixel
    assert rec.add(f, "rest", 0.0) == rec.add(f, "screen", 0.0) == 1
    rec.close()
    back = Recording.open(tmp_path / "p.jsonl")
    assert back.entries[0].file.endswith(".jpg") and back.entries[1].file.endswith(".png")
    np.testing.assert_array_equal(back.frame(1), f)


def test_a_key_frame_comes_again_so_a_lost_file_costs_a_bounded_stretch(tmp_path):
    shots = frames(KEY_EVERY + 5)
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(lossless=True))
    for i, f in enumerate(shots):
        rec.add(f, "rest", float(i))
    rec.close()
    back = Recording.open(tmp_path / "p.jsonl")
    keys = [e.id for e in back.entries.values() if e.base is None]
    assert len(keys) == 2 and keys[1] <= KEY_EVERY + 1
    np.testing.assert_array_equal(back.frame(KEY_EVERY + 4), shots[-1])


def test_the_budget_stops_keeping_frames_and_says_so(tmp_path):
    shots = frames(40)
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(budget_mb=0.12, lossless=True))
    ids = [rec.add(f, "rest", float(i)) for i, f in enumerate(shots)]
    rec.close()
    assert rec.budget_reached and None in ids
    assert "budget of 0 MB" in (rec.problem or "") and "--record-budget" in (rec.problem or "")
    back = Recording.open(tmp_path / "p.jsonl")
    assert 0 < len(back.ids()) < 40 and rec.bytes <= 0.12e6
    with pytest.raises(AgentError, match="not in the recording"):
        back.frame(39)


def test_a_torn_index_line_loses_only_itself_and_a_second_run_goes_on_after_the_first(tmp_path):
    journal = tmp_path / "p.jsonl"
    shots = frames(6)
    rec = Recorder(journal, "all", RecordOptions(lossless=True))
    for i, f in enumerate(shots[:3]):
        rec.add(f, "rest", float(i))
    rec.close()
    with open(frames_dir(journal) / "frames.ndjson", "a") as f:
        f.write('{"id": 3, "fi')  # the writer was killed mid-line
    again = Recorder(journal, "all", RecordOptions(lossless=True))  # a farm's retry of the same phone
    assert [again.add(f, "rest", 9.0) for f in shots[3:]] == [3, 4, 5]
    again.close()
    back = Recording.open(journal)
    assert back.ids() == [0, 1, 2, 3, 4, 5]
    for i, f in enumerate(shots):
        np.testing.assert_array_equal(back.frame(i), f)


def test_a_ring_holds_the_last_frames_and_writes_them_lossless_only_when_asked(tmp_path):
    shots = frames(RING_FRAMES + 4)
    rec = Recorder(tmp_path / "p.jsonl", "ring")
    for i, f in enumerate(shots):
        rec.add(f, "rest", float(i))
    assert not frames_dir(tmp_path / "p.jsonl").exists()  # nothing on disk for a run that goes well
    written = rec.flush()
    assert len(written) == RING_FRAMES and all(p.suffix == ".png" and p.exists() for p in written)
    back = Recording.open(tmp_path / "p.jsonl")
    assert back.ids() == list(range(4, RING_FRAMES + 4))
    np.testing.assert_array_equal(back.frame(RING_FRAMES + 3), shots[-1])


def test_bad_recording_options_and_missing_recordings_are_clear(tmp_path):
    with pytest.raises(AgentError, match="holds no frame"):
        Recorder(tmp_path / "p.jsonl", "all", RecordOptions(budget_mb=0))
    with pytest.raises(AgentError, match="has no recorded frames") as err:
        Recording.open(tmp_path / "none.jsonl")
    assert "agent play --record" in (err.value.hint or "")
    rec = Recorder(tmp_path / "p.jsonl", "all", RecordOptions(lossless=True))
    rec.add(frames(1)[0], "rest", 0.0)
    rec.close()
    for p in frames_dir(tmp_path / "p.jsonl").glob("0*.png"):
        p.unlink()
    with pytest.raises(AgentError, match="missing or unreadable"):
        Recording.open(tmp_path / "p.jsonl").frame(0)


# -- in the loop ----------------------------------------------------------------------


def run_loop(tmp_path: Path, mode: str, device=None, options=PlayOptions(moves=6), seed=3):
    phone = SimPhone(seed=seed, clock=ManualClock())
    journal_path = tmp_path / "sim.jsonl"
    profile = sim_game_profile(phone)
    rec = Recorder(journal_path, mode, RecordOptions(), (phone.model, *phone.screen_size()))  # type: ignore[arg-type]
    with Journal(journal_path) as journal:
        journal.write("start", profile={"snapshot": rec.snapshot_profile(profile)})
        summary = PlayLoop(device or phone, GAME, profile, Match3Player(phone.config, GreedySolver()), phone.clock,
                           options, journal, recorder=rec).run()  # fmt: skip
    rec.close()
    return summary, read_journal(journal_path), journal_path


def test_every_decision_and_check_names_a_frame_that_reads_as_the_journal_says(tmp_path):
    summary, lines, journal = run_loop(tmp_path, "all")
    rec = Recording.open(journal)
    profile = rec.profile_at(lines[0]["profile"]["snapshot"])
    read_on = [ln for ln in lines if ln["type"] in ("decision", "check")]
    assert summary.moves == 6 and len(read_on) == 12 and all("frame" in ln for ln in read_on)
    for ln in read_on:
        assert GAME.screen.read(rec.frame(ln["frame"]), profile).text == ln["board"]
    # a move's check and the next decision are read on one frame, kept once
    checks = {ln["index"]: ln["frame"] for ln in read_on if ln["type"] == "check"}
    decisions = {ln["index"]: ln["frame"] for ln in read_on if ln["type"] == "decision"}
    assert all(checks[i] == decisions[i + 1] for i in range(1, 6))
    assert lines[-1]["recording"] == "sim.frames" and "frames" not in lines[-1]


class Frozen:
    """A phone whose screen froze after the first move: the agent's swipes change nothing."""

    def __init__(self, phone: SimPhone) -> None:
        self.phone, self.serial, self.model = phone, phone.serial, phone.model
        self.frame: np.ndarray | None = None

    def screen_size(self):
        return self.phone.screen_size()

    def screencap(self):
        return self.phone.screencap() if self.frame is None else self.frame.copy()

    def tap(self, x, y):
        pass

    def swipe(self, x1, y1, x2, y2, duration_ms=200):
        if self.frame is None:
            self.frame = self.phone.screencap()


def test_a_run_that_fails_keeps_its_last_frames_and_names_them_without_record(tmp_path):
    phone = SimPhone(seed=3, clock=ManualClock())
    summary, lines, journal = run_loop(tmp_path, "ring", Frozen(phone), PlayOptions(max_failed_checks=2))
    stop = lines[-1]
    assert summary.stop_kind == "failed_checks" and stop["recording"] == "sim.frames"
    assert 1 <= len(stop["frames"]) <= RING_FRAMES and all(Path(f).exists() for f in stop["frames"])
    assert last_stop_frames(journal) == stop["frames"]
    rec = Recording.open(journal)
    last_check = [ln for ln in lines if ln["type"] == "check"][-1]
    assert last_check["verdict"] == "not_applied" and last_check["frame"] in rec.entries


def test_a_recorded_run_that_fails_names_its_last_frames_whole(tmp_path):
    phone = SimPhone(seed=3, clock=ManualClock())
    summary, lines, journal = run_loop(tmp_path, "all", Frozen(phone), PlayOptions(max_failed_checks=2))
    stop = lines[-1]
    assert summary.stop_kind == "failed_checks" and stop["recording"] == "sim.frames"
    shown = [cv2.imread(f) for f in stop["frames"]]
    assert shown and all(img is not None and img.shape == (2400, 1080, 3) for img in shown)
    np.testing.assert_array_equal(shown[-1], phone.screencap())  # the screen as it froze, every pixel


def test_a_run_that_goes_well_writes_no_frames_without_record(tmp_path):
    summary, lines, journal = run_loop(tmp_path, "ring")
    assert summary.stop_kind == "limit" and "frames" not in lines[-1] and "recording" not in lines[-1]
    assert not frames_dir(journal).exists()


# -- the command line ------------------------------------------------------------------


def test_cli_play_record_keeps_the_frames_and_says_where(tmp_path):
    r = runner.invoke(app, ["play", "--sim", "--moves", "5", "--record", "--size", "540x1200", "--runs",
                            str(tmp_path / "runs"), "--profiles", str(tmp_path / "p"), "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout.strip().splitlines()[-1])
    rec = out["recording"]
    assert rec["frames"] >= 5 and 0 < rec["mb"] < 5 and not rec["budget_reached"]
    assert Recording.open(Path(out["journal"])).ids() and Path(rec["folder"]).is_dir()


@pytest.mark.parametrize("args, message", [
    (["--record-budget", "5"], "it goes with --record"),
    (["--record-lossless"], "it goes with --record"),
    (["--record", "--record-quality", "0"], "--record-quality"),
])  # fmt: skip
def test_cli_recording_options_need_record(tmp_path, args, message):
    r = runner.invoke(app, ["play", "--sim", "--moves", "1", "--runs", str(tmp_path), *args], env={"COLUMNS": "200"})
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


def test_cli_a_budget_reached_is_said_in_the_journal_and_the_summary(tmp_path):
    r = runner.invoke(app, ["play", "--sim", "--moves", "8", "--record", "--record-budget", "0.2", "--size", "540x1200",
                            "--runs", str(tmp_path / "runs"), "--profiles", str(tmp_path / "p"), "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["recording"]["budget_reached"]
    notes = [ln["detail"] for ln in read_journal(out["journal"]) if ln["type"] == "note"]
    assert any("reached its budget" in n and "--record-budget" in n for n in notes)
