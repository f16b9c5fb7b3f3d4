"""Writers of one profile file at once, and writers that are not `agent screens`: what a
person taught is never dropped (issue 26).

- `agent play --sim --profiles DIR` writes the simulated phone's profile from its known
  layout on every start: the screens taught to that profile stay;
- a run saving what it learned keeps the screens taught while it played;
- several `agent screens add` at once on one profile are all kept (each reads the file
  under the folder's lock, after the one before wrote it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from agent.files import folder_locked
from agent.vision.classify import Exemplar
from agent.vision.features import DEFAULT_PATCH, feature_length
from agent.vision.profile import DeviceProfile, GameProfile, load_profile, save_profile, write_game_profile
from agent.vision.screens import teach_screen

ROOT = Path(__file__).resolve().parents[2]


def agent(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "agent.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, env=env)  # fmt: skip


def game(w: int = 1080, h: int = 2400, screens: tuple = ()) -> GameProfile:
    ex = [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))]
    return GameProfile.from_bbox("match3", 8, 8, (54, 720, 1026, 1692), w, h, ex, screens=screens)


def card(seed: int) -> np.ndarray:
    """A frame of a card of its own (each seed another)."""
    rng = np.random.default_rng(seed)
    img = np.full((2400, 1080, 3), 30, np.uint8)
    cv2.rectangle(img, (100, 700), (980, 1600), tuple(int(v) for v in rng.integers(80, 255, 3)), -1)
    for _ in range(6):
        x, y = (int(v) for v in rng.integers(150, 900, 2))
        cv2.circle(img, (x, y + 700), int(rng.integers(30, 90)), tuple(int(v) for v in rng.integers(0, 255, 3)), -1)
    return img


def test_a_profile_written_again_keeps_the_screens_taught_in_the_file(tmp_path):
    taught = teach_screen(card(0), "daily bonus", (540, 1300))
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game(screens=(taught,))}), tmp_path)
    fresh = game()  # what a simulated phone's layout gives, or a run's profile loaded before the screen was taught
    write_game_profile("Pixel 7", 1080, 2400, fresh, tmp_path)
    assert [s.name for s in load_profile(path).games["match3"].screens] == ["daily bonus"]
    later = teach_screen(card(1), "offer", None)
    g = load_profile(path).games["match3"]
    save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": GameProfile(**{**g.__dict__, "screens": (*g.screens, later)})}), path)
    write_game_profile("Pixel 7", 1080, 2400, fresh, tmp_path)
    assert [s.name for s in load_profile(path).games["match3"].screens] == ["daily bonus", "offer"]


def test_play_on_the_simulated_phone_keeps_the_screens_taught_to_its_profile(tmp_path):
    profiles = tmp_path / "profiles"
    first = agent("play", "--sim", "--moves", "1", "--profiles", str(profiles), "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert first.wait(timeout=300) == 0, first.stderr.read() if first.stderr else ""
    (path,) = profiles.glob("*.toml")
    dev = load_profile(path)
    (name, g), = dev.games.items()
    shot = tmp_path / "card.png"
    cv2.imwrite(str(shot), cv2.resize(card(2), (dev.width, dev.height)))
    add = agent("screens", "add", "--image", str(shot), "--back", "--name", "a card", "--game", name,
                "--profiles", str(profiles), cwd=tmp_path)  # fmt: skip
    assert add.wait(timeout=120) == 0, add.stderr.read() if add.stderr else ""
    again = agent("play", "--sim", "--moves", "1", "--profiles", str(profiles), "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert again.wait(timeout=300) == 0, again.stderr.read() if again.stderr else ""
    assert [s.name for s in load_profile(path).games[name].screens] == ["a card"]


def test_screens_taught_at_once_are_all_kept_and_each_waits_for_the_folders_lock(tmp_path):
    (tmp_path / "profiles").mkdir()
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game()}), tmp_path / "profiles")
    shots = []
    for i in range(4):
        shots.append(tmp_path / f"card{i}.png")
        cv2.imwrite(str(shots[-1]), card(10 + i))
    with folder_locked(path.parent):  # held: every one of them waits for it
        procs = [agent("screens", "add", "--image", str(s), "--back", "--name", f"card {i}",
                       "--profiles", str(path.parent), cwd=tmp_path) for i, s in enumerate(shots)]  # fmt: skip
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline and all(p.poll() is None for p in procs):
            time.sleep(0.2)
        assert all(p.poll() is None for p in procs), "a writer went on while the folder was locked"
        assert load_profile(path).games["match3"].screens == ()
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read() if p.stderr else ""
    assert sorted(s.name for s in load_profile(path).games["match3"].screens) == [f"card {i}" for i in range(4)]
    assert sorted(f.name for f in path.parent.iterdir()) == [path.name]  # no lock or temporary file left


def test_a_broken_taught_screen_is_named_with_how_to_remove_it_and_agent_screens_remove_does(tmp_path):
    """An entry of a taught screen broken by a hand edit: the message names the entry and
    how to remove it (before: "calibrate a new profile named after the image"), and
    `agent screens remove NAME` removes it, the rest of the profile kept as it was."""
    (tmp_path / "p").mkdir()
    taught = (teach_screen(card(20), "bonus", (540, 1300)), teach_screen(card(21), "offer", None))
    path = save_profile(DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game(screens=taught)}), tmp_path / "p")
    path.write_text(path.read_text().replace('action = "tap"', 'action = "tapp"', 1))
    shot = tmp_path / "card.png"
    cv2.imwrite(str(shot), card(20))
    check = agent("screens", "check", "--image", str(shot), "--profiles", str(tmp_path / "p"), cwd=tmp_path)
    _, err = check.communicate(timeout=120)
    assert check.returncode != 0 and "Traceback" not in err
    assert "screens[0].action" in err and "agent screens remove bonus --profiles" in err, err
    assert "calibrate" not in err.split("fix:")[1].split("(or")[0]
    missing = agent("screens", "remove", "nothing", "--profiles", str(tmp_path / "p"), cwd=tmp_path)
    _, err = missing.communicate(timeout=120)
    assert missing.returncode != 0 and "no taught screen named 'nothing'" in err and "agent screens list" in err
    assert "tapp" in path.read_text()  # (nothing written)
    rm = agent("screens", "remove", "bonus", "--profiles", str(tmp_path / "p"), cwd=tmp_path)
    out, err = rm.communicate(timeout=120)
    assert rm.returncode == 0, err
    assert "removed screen 'bonus' of match3" in out
    kept = load_profile(path).games["match3"]
    assert [s.name for s in kept.screens] == ["offer"] and kept.rows == 8 and kept.board_bbox == (54, 720, 1026, 1692)
