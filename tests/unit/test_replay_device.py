"""The replay device: a recording's frames served through the Device protocol, one per
stretch between two gestures, so the play loop plays a recorded run back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.device.base import AppControl, Device
from agent.device.clock import ManualClock
from agent.errors import DeviceError, GestureError
from agent.games.registry import get_game
from agent.play.journal import Journal, read_journal
from agent.play.loop import PlayLoop, PlayOptions
from agent.play.recording import Recording
from agent.play.replay import recorded_profile, run_settings
from agent.play.replay_device import RecordingEnded, ReplayDevice, gesture_lines, served_foregrounds, served_frames

RECORDINGS_DIR = Path(__file__).parents[1] / "data" / "recordings"


def journal_of(name: str) -> Path:
    (journal,) = (RECORDINGS_DIR / name).glob("*.jsonl")
    return journal


def test_it_is_a_device_with_the_recorded_phone_s_screen():
    device = ReplayDevice.open(journal_of("match3"))
    assert isinstance(device, Device) and isinstance(device, AppControl)
    start = read_journal(journal_of("match3"))[0]
    assert device.screen_size() == tuple(start["device"]["size"])
    assert device.model == start["device"]["model"]
    assert device.serial == f"replay-{start['device']['serial']}"
    frame = device.screencap()
    assert frame.shape == (start["device"]["size"][1], start["device"]["size"][0], 3) and frame.dtype == np.uint8
    assert device.foreground() is None


def test_it_stays_on_a_frame_until_a_gesture_and_ends_after_the_last():
    journal = journal_of("lightsout")
    lines = read_journal(journal)
    recording = Recording.open(journal)
    device = ReplayDevice(recording, lines)
    steps = served_frames(lines)
    # one frame per move (the one it was decided on), then the last check's
    assert steps == [line["frame"] for line in lines if line["type"] == "decision"] + [
        [line for line in lines if line["type"] == "check"][-1]["frame"]]  # fmt: skip
    first = device.screencap()
    assert device.screencap() is first  # the same screen, captured again
    assert np.array_equal(first, recording.frame(steps[0]))
    device.tap(10, 10)
    device.tap(20, 20)  # two taps with no capture between: one move, one step on
    second = device.screencap()
    assert device.step == 1 and np.array_equal(second, recording.frame(steps[1]))
    assert not np.array_equal(first, second)
    for _ in steps[2:]:
        device.back()
        device.screencap()
    assert device.step == len(steps) - 1 and not device.ended
    device.swipe(1, 2, 3, 4, 150)
    assert device.ended
    with pytest.raises(RecordingEnded, match="the recording ended") as caught:
        device.screencap()
    assert isinstance(caught.value, DeviceError)
    assert device.gestures[:3] == [["tap", 10, 10], ["tap", 20, 20], ["back"]]
    assert device.gestures[-1] == ["swipe", 1, 2, 3, 4, 150]


def test_the_app_in_front_is_answered_as_the_phone_answered_it_then():
    lines = [
        {"type": "start"},
        {"type": "decision", "frame": 0},
        {"type": "screen", "frame": 1, "kind": "board", "foreground": "com.game"},
        {"type": "screen", "frame": 2, "kind": "other_app", "foreground": "com.chat"},
        {"type": "launch", "package": "com.game"},
        {"type": "decision", "frame": 3},
        {"type": "screen", "frame": 4, "kind": "covered", "foreground": "com.game"},
        {"type": "dismissed", "frame": 4},
    ]
    assert served_frames(lines) == [0, 2, 3, 4, 4]
    # as asked on the frame each stretch shows; once launched, the game is in front
    assert served_foregrounds(lines) == [None, "com.chat", "com.game", "com.game", "com.game"]


def test_gestures_off_the_screen_are_refused():
    device = ReplayDevice.open(journal_of("match3"))
    w, h = device.screen_size()
    with pytest.raises(GestureError):
        device.tap(w, 0)
    with pytest.raises(GestureError):
        device.swipe(0, 0, 0, h)
    assert device.gestures == []


def test_served_frames_follow_the_gestures_of_moves_dismissals_and_launches():
    lines = [
        {"type": "start"},
        {"type": "decision", "frame": 0, "gestures": [["swipe", 1, 2, 3, 4, 100]]},
        {"type": "moving"},
        {"type": "check", "frame": 1},
        {"type": "decision", "frame": 1, "gestures": [["tap", 5, 6], ["pause", 0.08], ["tap", 7, 8]]},
        {"type": "screen", "frame": 2},
        {"type": "dismissed", "frame": 2, "kind": "tap", "point": [9, 9]},
        {"type": "screen", "frame": 3},
        {"type": "dismissed", "frame": 3, "kind": "back", "point": None},
        {"type": "launch", "package": "com.game"},
        {"type": "check", "frame": 4, "verdict": "unverified"},
        {"type": "stop"},
    ]
    assert served_frames(lines) == [0, 1, 2, 3, 3, 4]
    assert gesture_lines(lines) == [["swipe", 1, 2, 3, 4, 100], ["tap", 5, 6], ["tap", 7, 8], ["tap", 9, 9],
                                    ["back"], ["launch", "com.game"]]  # fmt: skip


def _loop(name: str, moves: int | None) -> tuple[ReplayDevice, PlayLoop, list[dict], Path]:
    journal = journal_of(name)
    lines = read_journal(journal)
    recording = Recording.open(journal)
    game = get_game(lines[0]["game"])
    profile = recorded_profile(lines[0], recording)
    settings, seed = run_settings(game, lines[0])
    device = ReplayDevice(recording, lines)
    player = game.screen.player(profile, settings, seed)
    return device, PlayLoop(device, game, profile, player, ManualClock(), PlayOptions(moves=moves)), lines, journal


@pytest.mark.parametrize("name", ["match3", "lines", "lightsout"])
def test_the_play_loop_on_a_replay_device_makes_the_recorded_moves(name):
    device, loop, lines, _ = _loop(name, read_journal(journal_of(name))[0]["options"]["moves"])
    summary = loop.run()
    recorded = [line for line in lines if line["type"] == "decision"]
    assert summary.moves == len(recorded)
    assert device.gestures == gesture_lines(lines)
    assert summary.checks == {k: sum(1 for line in lines if line["type"] == "check" and line["verdict"] == k)
                              for k in summary.checks}  # fmt: skip


def test_with_no_move_limit_the_loop_plays_to_the_end_of_the_recording(tmp_path):
    device, loop, lines, _ = _loop("match3", None)
    loop.journal = Journal(tmp_path / "replay.jsonl")
    with pytest.raises(RecordingEnded):
        loop.run()
    loop.journal.close()
    recorded = gesture_lines(lines)
    # every recorded move, then one more decided on the last frame, after which nothing is left
    assert device.gestures[: len(recorded)] == recorded and len(device.gestures) == len(recorded) + 1
    stop = read_journal(tmp_path / "replay.jsonl")[-1]
    assert stop["type"] == "stop" and stop["kind"] == "device_error" and "recording ended" in stop["reason"]
