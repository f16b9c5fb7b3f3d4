"""`agent replay`: recorded runs read and decided again, compared with what they did.

The recordings in tests/data/recordings are regression tests: each was played on a
simulated phone with `record_sim_run` (what `agent play --sim --record` does) and must
replay with no difference, by re-reading and re-deciding and through the play loop.
Regenerate them, after a change that is meant to change what the agent does, with

    python tests/test_replay.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent.errors import AgentError
from agent.play.journal import read_journal
from agent.play.recording import Recording
from agent.play.replay import board_diff, record_sim_run, recorded_profile, replay_loop, replay_run
from agent.vision.classify import Exemplar
from agent.vision.ocr import ocr_unavailable_reason
from agent.vision.profile import DeviceProfile, GameProfile, save_profile

RECORDINGS_DIR = Path(__file__).parents[1] / "data" / "recordings"
# name -> (game, moves, the game's options): small screens, a few moves, each under 3.5 MB.
# Lines plays with greedy: its search player stops thinking at a time budget, so what it
# picks depends on how fast the machine is, and no recording of it replays exactly.
RECORDINGS: dict[str, tuple[str, int, dict[str, object]]] = {
    "match3": ("match3", 8, {}),
    "lines": ("lines", 8, {"solver": "greedy"}),
    "lightsout": ("lightsout", 8, {}),
    # levels of other shapes, dialogs, looks learned during the run: profile changes replayed
    "match3-saga": ("match3", 6, {"scene": "saga", "variant": "auto"}),
}


def regenerate(root: Path = RECORDINGS_DIR) -> None:
    for name, (game, moves, given) in RECORDINGS.items():
        shutil.rmtree(root / name, ignore_errors=True)
        record_sim_run(game, root / name, moves, given=given)


def agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})  # fmt: skip


def copy_run(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(RECORDINGS_DIR / name, dst)
    return dst


def journal_of(run: Path) -> Path:
    (journal,) = run.glob("*.jsonl")
    return journal


def decisions(run: Path) -> list[dict]:
    return [line for line in read_journal(journal_of(run)) if line["type"] == "decision"]


def swapped_classes(profile: GameProfile, a: str = "A", b: str = "B") -> GameProfile:
    """The profile with two classes' looks exchanged: it reads every A as B and back."""
    swap = {a: b, b: a}
    return replace(profile, exemplars=[Exemplar(swap.get(e.label, e.label), e.features) for e in profile.exemplars])


def rewrite_journal(run: Path, change) -> None:
    journal = journal_of(run)
    lines = [change(line) for line in read_journal(journal)]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))


# -- the committed recordings ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_every_committed_recording_replays_with_no_difference(name):
    run = RECORDINGS_DIR / name
    # (the saga run keeps its dialogs lossless, an ad's countdown among them)
    assert sum(p.stat().st_size for p in run.rglob("*") if p.is_file()) < 3_500_000
    report = replay_run(run)
    recorded = decisions(run)
    assert len(report.decisions) == len(recorded) == RECORDINGS[name][1]
    assert [d.recorded_move for d in report.decisions] == [d["move"] for d in recorded]
    assert [d.replayed_move for d in report.decisions] == [d["move"] for d in recorded]
    assert all(d.board_same and d.cells == () for d in report.decisions)
    assert report.checks and all(c.same for c in report.checks)
    assert report.not_recorded == 0 and report.ok, report.summary()


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_every_committed_recording_plays_back_through_the_loop(name):
    if name == "match3-saga" and ocr_unavailable_reason() is not None:
        pytest.skip(f"its dialogs were dismissed by buttons read by OCR: {ocr_unavailable_reason()}")
    played = replay_loop(RECORDINGS_DIR / name)
    recorded = decisions(RECORDINGS_DIR / name)
    assert played.replayed_moves == [d["move"] for d in recorded]
    # every gesture too, the taps on dialogs among them: their frames are kept lossless
    assert played.moves_same and played.same and played.replayed == played.recorded


def test_a_saga_recording_follows_the_profile_the_run_changed_to(tmp_path):
    run = copy_run("match3-saga", tmp_path)
    changes = [line for line in read_journal(journal_of(run)) if line["type"] == "profile"]
    assert len(changes) >= 2 and all(line.get("snapshot") for line in changes)
    assert any("new_classes" in line for line in changes)  # a new level's board
    # Without the profiles the run changed to, the boards after its new level do not read.
    rewrite_journal(run, lambda line: {k: v for k, v in line.items() if k != "snapshot"}
                    if line["type"] == "profile" else line)  # fmt: skip
    report = replay_run(run)
    assert not report.ok
    assert any("a profile change was not recorded" in note for note in report.notes)
    after = [d for d in report.decisions if d.frame is not None and d.index > 2]
    assert after and not any(d.board_same for d in after)


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_recordings_made_again_from_the_simulated_phone_still_replay(name, tmp_path):
    game, moves, given = RECORDINGS[name]
    journal = record_sim_run(game, tmp_path / name, moves, given=given)
    report = replay_run(journal.parent)
    assert len(report.decisions) == moves and report.ok, report.summary()
    if name != "match3-saga":  # through the loop it is the committed one's test (its OCR is slow)
        assert replay_loop(journal.parent).same


# -- differences are found ---------------------------------------------------------------


def test_a_wrong_profile_reads_other_boards_and_the_replay_says_where(tmp_path):
    run = RECORDINGS_DIR / "match3"
    recording = Recording.open(journal_of(run))
    right = recorded_profile(read_journal(journal_of(run))[0], recording)
    report = replay_run(run, profile_override=swapped_classes(right))
    assert not report.ok and report.summary().startswith("differs:")
    assert report.profile == "the given profile"
    first = report.decisions[0]
    assert not first.board_same and first.cells
    # every cell that differs is an A read as B or a B read as A, and every A and B is one
    assert {(c.recorded, c.replayed) for c in first.cells} <= {("A", "B"), ("B", "A")}
    assert len(first.cells) == sum(ch in "AB" for ch in first.recorded_board)


def test_the_cli_exits_1_with_a_wrong_profile_and_names_the_differences(tmp_path):
    run = RECORDINGS_DIR / "match3"
    lines = read_journal(journal_of(run))
    right = recorded_profile(lines[0], Recording.open(journal_of(run)))
    device = lines[0]["device"]
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    save_profile(DeviceProfile(device["model"], *device["size"], None, {"match3": swapped_classes(right)}), profiles)
    r = agent("replay", str(run), "--profiles", str(profiles))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "differs" in r.stdout and ("A->B" in r.stdout or "B->A" in r.stdout)
    assert r.stdout.strip().splitlines()[-1].startswith("differs:")
    assert "Traceback" not in r.stdout + r.stderr
    # the same folder holding the right profile agrees again
    save_profile(DeviceProfile(device["model"], *device["size"], None, {"match3": right}), profiles)
    r = agent("replay", str(run), "--profiles", str(profiles))
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_recorded_move_the_code_would_not_make_is_a_difference(tmp_path):
    run = copy_run("lightsout", tmp_path)
    made = decisions(run)[2]["move"]
    assert made != "(4, 4)"
    rewrite_journal(run, lambda line: {**line, "move": "(4, 4)"} if line.get("index") == 3
                    and line["type"] == "decision" else line)  # fmt: skip
    report = replay_run(run)
    row = report.decisions[2]
    assert row.board_same and not row.move_same
    assert (row.recorded_move, row.replayed_move) == ("(4, 4)", made)
    assert [d.same for d in report.decisions] == [i != 2 for i in range(8)]
    assert not report.ok
    r = agent("replay", str(run), "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["ok"] is False and [d["move_same"] for d in out["decisions"]][2] is False


def test_a_recorded_board_read_otherwise_names_the_cells(tmp_path):
    run = copy_run("match3", tmp_path)
    first = decisions(run)[0]["board"]
    changed = ("X" if first[0] != "X" else "Y") + first[1:]
    rewrite_journal(run, lambda line: {**line, "board": changed} if line["type"] == "decision"
                    and line["index"] == 1 else line)  # fmt: skip
    row = replay_run(run).decisions[0]
    assert not row.board_same and row.move_same
    assert [(c.row, c.col, c.recorded, c.replayed) for c in row.cells] == [(0, 0, changed[0], first[0])]


def test_a_decision_whose_frame_was_not_kept_is_counted_and_the_run_is_not_ok(tmp_path):
    run = copy_run("match3", tmp_path)
    rewrite_journal(run, lambda line: {k: v for k, v in line.items() if k != "frame"}
                    if line["type"] == "decision" and line["index"] == 4 else line)  # fmt: skip
    report = replay_run(run)
    assert [d.replayed for d in report.decisions] == [i != 3 for i in range(8)]
    assert report.not_recorded == 1 and not report.ok
    assert "1 not replayed (frame not recorded)" in report.summary()
    # the check of the move whose decision was skipped cannot be replayed either
    assert [c.index for c in report.checks if c.replayed and c.replayed.startswith("not checked")] == [4]
    r = agent("replay", str(run))
    assert r.returncode == 1 and "not recorded" in r.stdout
    with pytest.raises(AgentError, match="not recorded"):
        replay_loop(run)


def test_a_run_not_recorded_whole_is_refused_or_replayed_for_what_it_kept(tmp_path):
    """Without --record only the last frames before a failed stop are kept: no profile
    with them (exit 2, saying how to record), and with --profiles the moves whose frames
    are gone count as not replayed (exit 1)."""
    from agent.games.registry import get_game, settings
    from agent.play import run as runs_mod
    from agent.play.loop import PlayOptions

    game = get_game("match3")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    run = runs_mod.sim_run(game, settings(game, {}, True), 0, (540, 1200), False, profiles)
    right = run.match.profile
    # every A read as B: the board as read is not the board, and the run stops on a failure
    blind = replace(right, exemplars=[Exemplar("B" if e.label == "A" else e.label, e.features) for e in right.exemplars])
    run.match = replace(run.match, profile=blind)
    journal = tmp_path / "run" / "sim-0.jsonl"
    summary = runs_mod.play(run, PlayOptions(moves=20), journal)
    assert summary.stop_kind not in ("limit", "finished") and (tmp_path / "run" / "sim-0.frames").is_dir()
    r = agent("replay", str(journal.parent))
    assert r.returncode == 2 and "not recorded whole" in r.stderr and "agent play --record" in r.stderr
    r = agent("replay", str(journal.parent), "--profiles", str(profiles))
    assert r.returncode == 1 and "not recorded" in r.stdout and "Traceback" not in r.stderr


def test_board_diff_lists_cells_and_ragged_rows():
    assert board_diff("AB\nCD", "AB\nCD") == ()
    assert [(c.row, c.col, c.recorded, c.replayed) for c in board_diff("AB\nCD", "AX\nC")] == [
        (0, 1, "B", "X"), (1, 1, "D", "")]  # fmt: skip


# -- bad input ---------------------------------------------------------------------------


def test_a_folder_without_a_journal_exits_2(tmp_path):
    r = agent("replay", str(tmp_path))
    assert r.returncode == 2
    assert "holds no journal" in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    r = agent("replay", str(tmp_path / "missing"))
    assert r.returncode == 2 and "no run folder" in r.stderr


def test_a_journal_without_a_recording_says_how_to_record_one(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(journal_of(RECORDINGS_DIR / "match3"), run)
    r = agent("replay", str(run))
    assert r.returncode == 2
    assert "has no recording" in r.stderr and "record it with `agent play --record`" in r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_several_journals_need_a_serial_and_the_error_names_them(tmp_path):
    run = copy_run("match3", tmp_path)
    other = copy_run("lightsout", tmp_path / "x")
    shutil.copy(journal_of(other), run)
    shutil.copytree(other / "sim-lightsout.frames", run / "sim-lightsout.frames")
    r = agent("replay", str(run))
    assert r.returncode == 2 and "--serial" in r.stderr and "sim-0" in r.stderr and "sim-lightsout" in r.stderr
    assert agent("replay", str(run), "--serial", "sim-lightsout").returncode == 0
    r = agent("replay", str(run), "--serial", "nope")
    assert r.returncode == 2 and "no journal of 'nope'" in r.stderr
    # a journal named directly needs no serial
    assert agent("replay", str(run / "sim-0.jsonl")).returncode == 0


def test_a_journal_that_is_no_run_exits_2(tmp_path):
    run = tmp_path / "run"
    (run / "x.frames").mkdir(parents=True)
    (run / "x.jsonl").write_text('{"type": "decision"}\n')
    r = agent("replay", str(run))
    assert r.returncode == 2 and "start line" in r.stderr and "Traceback" not in r.stderr
    for text, says in (("not json\n", "start line"), ('{"type": "start"}\nnot json\n{}\n', "line 2 of the journal"),
                       ('{"type": "start"}\n[1, 2]\n', "no event"), (b"\xff\xfe".decode("latin-1"), "start line")):
        (run / "x.jsonl").write_text(text)
        r = agent("replay", str(run))
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (text, r.stderr)
    r = agent("replay", str(run / "x.frames"))
    assert r.returncode == 2 and "holds no journal" in r.stderr


def test_a_journal_torn_by_a_kill_still_replays_and_says_it_is_incomplete(tmp_path):
    run = copy_run("lightsout", tmp_path)
    with open(journal_of(run), "a") as f:
        f.write('{"type":"decision","index":9,"bo')
    report = replay_run(run)
    assert report.decisions and all(d.same for d in report.decisions)  # what is there replays the same
    assert not report.ok and report.summary().startswith("incomplete:") and "torn" in report.summary()


def test_profiles_folder_without_a_fitting_profile_exits_2(tmp_path):
    r = agent("replay", str(RECORDINGS_DIR / "match3"), "--profiles", str(tmp_path))
    assert r.returncode == 2 and "error:" in r.stderr and "Traceback" not in r.stderr


def test_the_cli_agrees_on_a_committed_recording_and_prints_a_row_per_move():
    r = agent("replay", str(RECORDINGS_DIR / "lines"), "--loop")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 8 and all("same" in row for row in rows)
    assert "play loop: 8 moves of 8 recorded" in r.stdout
    assert r.stdout.strip().splitlines()[-1].startswith("same: 8 of 8 decisions the same")


def test_a_gesture_a_pixel_or_two_off_is_the_same_and_another_is_not():
    from agent.play.replay import SAME_POINT_PX, same_gesture, same_gestures

    swipe = ["swipe", 846, 1108, 948, 1108, 120]
    assert same_gesture(swipe, ["swipe", 847, 1108, 949, 1108, 120])
    assert same_gesture(swipe, ["swipe", 846 + SAME_POINT_PX, 1108, 948, 1108 - SAME_POINT_PX, 120])
    assert not same_gesture(swipe, ["swipe", 846 + SAME_POINT_PX + 1, 1108, 948, 1108, 120])
    assert not same_gesture(swipe, ["swipe", 846, 1108, 948, 1108, 240])  # slower: another gesture
    assert not same_gesture(swipe, ["tap", 846, 1108])
    assert same_gesture(["launch", "com.game"], ["launch", "com.game"])
    assert not same_gesture(["launch", "com.game"], ["tap", 10, 10])
    assert not same_gestures([swipe], [swipe, swipe])


if __name__ == "__main__":
    regenerate()
    print(f"recordings written to {RECORDINGS_DIR}")
