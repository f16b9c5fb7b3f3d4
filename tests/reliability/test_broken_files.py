"""Causes 3 and 4: every file the program reads, broken.

A broken profile of another phone in the profiles folder is skipped with a note, never a
crash of the phone being used; the phone's own unreadable profile is an error naming the
file, and `agent calibrate --yes` replaces it. Broken puzzle files, board files and images
are an error naming the file (exit 1, `error:` and `fix:`), never a traceback, and an
image is sized from its header before it is decoded (a pixel bomb is refused at once).
"""

from __future__ import annotations

import json
import re
import signal
import socket
import struct
import subprocess
import threading
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from agent.vision.profile import load_profile
from redteam import Result, agent, agent_cmd, agent_env, assert_handled, listening, wait_for

SIZE = (1080, 2400)
OTHER = f"other-phone_{SIZE[0]}x{SIZE[1]}.toml"  # same resolution: a candidate for every lookup
SIM_FILE = f"puzzle-sim_{SIZE[0]}x{SIZE[1]}.toml"  # the simulated phone's own file
IMAGE_FILE = f"image_{SIZE[0]}x{SIZE[1]}.toml"  # `agent read`'s own file (its model is "image")


# -- what a broken profile can be ---------------------------------------------------------


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> dict[str, Path]:
    """A valid simulated-phone profile and a screenshot of that phone."""
    from agent.device.clock import ManualClock
    from agent.games.match3.sim import SimPhone
    from agent.games.match3.sim_profile import save_sim_profile

    d = tmp_path_factory.mktemp("assets")
    phone = SimPhone(seed=0, size=SIZE, clock=ManualClock())
    profile = save_sim_profile(phone, d)
    shot = d / "shot.png"
    cv2.imwrite(str(shot), phone.screencap())
    return {"profile": profile, "shot": shot}


def _replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"the profile has no {old!r} to break"
    return text.replace(old, new, 1)


def _valid_text(assets: dict[str, Path], model: str) -> str:
    return _replaced(assets["profile"].read_text(), 'model = "puzzle-sim"', f'model = "{model}"')


def _feature(text: str, value: str) -> str:
    """The profile with its first exemplar's first feature set to `value`."""
    out, n = re.subn(r"(features = \[\s*)[-0-9.e+]+", lambda m: m.group(1) + value, text, count=1)
    assert n == 1
    return out


BROKEN = {
    "deep arrays": lambda a, model: "a = " + "[" * 5000 + "]" * 5000 + "\n",
    "deep inline tables": lambda a, model: "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",
    "feature 1e39": lambda a, model: _feature(_valid_text(a, model), "1e39"),  # finite float64, inf float32
    "feature 1e400": lambda a, model: _feature(_valid_text(a, model), "1e400"),  # inf already
    "huge integer": lambda a, model: _replaced(_valid_text(a, model), "swipe_ms = 200", "swipe_ms = 1" + "0" * 400),
    "huge integer feature": lambda a, model: _feature(_valid_text(a, model), "1" + "0" * 400),
    "wrong types": lambda a, model: '[device]\nmodel = 1\nwidth = "wide"\nheight = [2400]\n',
    "missing keys": lambda a, model: f'[device]\nmodel = "{model}"\n',
    "unknown key": lambda a, model: _replaced(_valid_text(a, model), "[device]", "[device]\ncolour = 3"),
    "non-UTF-8": lambda a, model: b"[device]\nmodel = \"\xff\xfe\"\n",
    "empty": lambda a, model: b"",
    "binary junk": lambda a, model: bytes(range(256)) * 16,
    "a folder": None,
}


def plant(folder: Path, name: str, variant: str, assets: dict[str, Path], model: str) -> Path:
    """Put the broken profile `variant` at folder/name."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    make = BROKEN[variant]
    if make is None:
        path.mkdir()
        (path / "notes.txt").write_text("a folder named like a profile\n")
        return path
    content = make(assets, model)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def profiles_with_other_broken(tmp_path: Path, variant: str, assets: dict[str, Path]) -> Path:
    """A profiles folder holding the simulated phone's good profile and another phone's
    broken one."""
    folder = tmp_path / "device_profiles"
    folder.mkdir()
    (folder / SIM_FILE).write_bytes(assets["profile"].read_bytes())
    plant(folder, OTHER, variant, assets, "other phone")
    return folder


VARIANTS = list(BROKEN)


# -- another phone's broken profile ---------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_play_sim_is_not_stopped_by_another_phones_profile(tmp_path, variant, assets):
    profiles_with_other_broken(tmp_path, variant, assets)
    r = agent("play", "--sim", "--moves", "2", cwd=tmp_path, timeout=120)
    assert_handled(r, 0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_read_skips_another_phones_profile_with_a_note(tmp_path, variant, assets):
    profiles_with_other_broken(tmp_path, variant, assets)
    r = agent("read", "--image", str(assets["shot"]), cwd=tmp_path, timeout=120)
    assert_handled(r, 0, says=("note: skipped", OTHER))
    assert "profile: " in r.out and SIM_FILE in r.out


@pytest.mark.parametrize("variant", VARIANTS)
def test_read_json_notes_go_to_stderr(tmp_path, variant, assets):
    profiles_with_other_broken(tmp_path, variant, assets)
    r = agent("read", "--image", str(assets["shot"]), "--json", cwd=tmp_path, timeout=120)
    assert_handled(r, 0)
    assert "cells" in r.out and OTHER in r.err


@pytest.mark.parametrize("variant", VARIANTS)
def test_calibrate_is_not_stopped_by_another_phones_profile(tmp_path, variant, assets):
    folder = profiles_with_other_broken(tmp_path, variant, assets)
    r = agent("calibrate", "--sim", "--yes", cwd=tmp_path, timeout=120)
    assert_handled(r, 0)
    assert (folder / SIM_FILE).is_file()


def _serve(tmp_path: Path) -> Result:
    """`agent sim serve` until it serves (or ends), then Ctrl-C."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ("sim", "serve", "--port", str(port))
    proc = subprocess.Popen(agent_cmd(*args), cwd=tmp_path, env=agent_env(None, tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")  # fmt: skip
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        wait_for(lambda: proc.poll() is not None or (listening(port) and any("serving" in ln for ln in out)), 60)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return Result(args, proc.returncode, "".join(out), err)


@pytest.mark.parametrize("variant", ["deep arrays", "feature 1e39", "non-UTF-8", "a folder"])
def test_sim_serve_is_not_stopped_by_another_phones_profile(tmp_path, variant, assets):
    profiles_with_other_broken(tmp_path, variant, assets)
    r = _serve(tmp_path)
    assert_handled(r, 0)
    assert "serving" in r.out


# -- this phone's own broken profile --------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_read_names_its_own_unreadable_profile(tmp_path, variant, assets):
    folder = tmp_path / "device_profiles"
    (folder).mkdir()
    (folder / SIM_FILE).write_bytes(assets["profile"].read_bytes())
    plant(folder, IMAGE_FILE, variant, assets, "image")
    r = agent("read", "--image", str(assets["shot"]), cwd=tmp_path, timeout=120)
    if variant == "a folder":  # not replaceable: moved away by hand
        assert_handled(r, 1, says=(IMAGE_FILE, "folder"))
        return
    assert_handled(r, 1, says=(IMAGE_FILE, "agent calibrate", "--yes"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_read_with_an_unreadable_profile_option_names_it(tmp_path, variant, assets):
    path = plant(tmp_path, "given.toml", variant, assets, "given")
    r = agent("read", "--image", str(assets["shot"]), "--profile", str(path), cwd=tmp_path, timeout=120)
    assert_handled(r, 1, says="given.toml")


@pytest.mark.parametrize("variant", VARIANTS)
def test_calibrate_yes_replaces_an_unreadable_profile(tmp_path, variant, assets):
    from agent.vision.profile import load_profile

    folder = tmp_path / "device_profiles"
    path = plant(folder, SIM_FILE, variant, assets, "puzzle-sim")
    r = agent("calibrate", "--sim", "--yes", cwd=tmp_path, timeout=120)
    if variant == "a folder":  # never replaced: a folder may hold anything
        assert_handled(r, 1, says=(SIM_FILE, "folder"))
        assert (path / "notes.txt").is_file()
        return
    assert_handled(r, 0)
    assert "match3" in load_profile(path).games


@pytest.mark.parametrize("variant", ["deep arrays", "feature 1e39", "non-UTF-8", "empty"])
def test_calibrate_without_yes_says_the_file_is_unreadable_and_yes_replaces_it(tmp_path, variant, assets):
    folder = tmp_path / "device_profiles"
    path = plant(folder, SIM_FILE, variant, assets, "puzzle-sim")
    before = path.read_bytes()
    r = agent("calibrate", "--sim", cwd=tmp_path, timeout=120, stdin="")
    assert_handled(r, 1, says=(SIM_FILE, "unreadable", "--yes"))
    assert path.read_bytes() == before  # nothing replaced without confirmation


@pytest.mark.parametrize("variant", VARIANTS)
def test_play_sim_rewrites_its_own_unreadable_profile(tmp_path, variant, assets):
    folder = tmp_path / "device_profiles"
    planted = plant(folder, SIM_FILE, variant, assets, "puzzle-sim")
    before = None if planted.is_dir() else planted.read_bytes()
    r = agent("play", "--sim", "--moves", "2", cwd=tmp_path, timeout=120)
    if variant == "a folder":
        assert_handled(r, 1, says=(SIM_FILE, "folder"))
        return
    # The broken file may hold a hand edit: kept beside, byte for byte, and the user told where.
    assert_handled(r, 0, says=("kept as", f"device_profiles/{SIM_FILE}.unreadable"))
    assert (folder / f"{SIM_FILE}.unreadable").read_bytes() == before
    assert "match3" in load_profile(folder / SIM_FILE).games


# -- puzzle files (lights out) ----------------------------------------------------------------

PUZZLES = {
    "deep arrays": "name = \"x\"\nbuttons = " + "[" * 5000 + "]" * 5000 + "\n",
    "deep inline tables": "name = \"x\"\nmeta = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "non-UTF-8": b"name = \"\xff\xfe\"\nlights = 2\nbuttons = [[0], [1]]\n",
    "binary junk": bytes(range(256)) * 8,
    "empty": "",
    "light out of range": "lights = 3\nbuttons = [[0, 1], [5]]\n",
    "negative lights": "lights = -3\nbuttons = [[0]]\n",
    "huge lights": "lights = 1" + "0" * 400 + "\nbuttons = [[0]]\n",
    "float rows": "rows = 2.5\ncols = 3\nstencil = [[0, 0]]\n",
    "stencil not pairs": "rows = 3\ncols = 3\nstencil = [[0, 0, 0]]\n",
    "stencil too long": "rows = 3\ncols = 3\nstencil = [" + ", ".join(["[0, 0]"] * 5000) + "]\n",
    "bad goal": "rows = 3\ncols = 3\nstencil = [[0, 0]]\ngoal = \"zzz\"\n",
    "goal not a string": "rows = 3\ncols = 3\nstencil = [[0, 0]]\ngoal = 7\n",
    "unknown key": "rows = 3\ncols = 3\nstencil = [[0, 0]]\ncolour = 1\n",
    "button listed twice": "lights = 2\nbuttons = [[0, 0]]\n",
    "not TOML": "this is = = not toml [\n",
    "a folder": None,
}


@pytest.mark.parametrize("variant", list(PUZZLES))
def test_broken_puzzle_file_is_named(tmp_path, variant):
    path = tmp_path / "puzzle.toml"
    content = PUZZLES[variant]
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    r = agent("solve", "--game", "lightsout", "--puzzle", str(path), "--board", "000/000/000", cwd=tmp_path)
    assert_handled(r, 1, says="puzzle.toml")


# -- board files ----------------------------------------------------------------------------

MATCH3_BOARD = "ABAB\nBABA\nAABA\nBBAB\n"
JUNQI_ROWS = 12  # any row count the notation does not take is refused with a message


@pytest.mark.parametrize(
    "levels, says",
    [("A=40", "above 20"), ("A=21", "above 20"), ("B=" + "9" * 5000, "above 20"), ("C=-1", "not a level"),
     ("A=1.5", "not a level"), ("Z=1", "not a level")],
    ids=["40", "21", "5000 digits", "negative", "fraction", "no such tile"],
)  # fmt: skip
def test_match3_levels_out_of_range_are_named(tmp_path, levels, says):
    path = tmp_path / "board.txt"
    path.write_text(f"# levels {levels}\n{MATCH3_BOARD}")
    r = agent("solve", "--board", str(path), cwd=tmp_path)
    assert_handled(r, 1, says=("board.txt", "level", says))


def test_match3_top_level_is_solved(tmp_path):
    """The control: the highest level the scoring holds is solved, with its 3**20 gains."""
    path = tmp_path / "board.txt"
    path.write_text(f"# levels A=20\n{MATCH3_BOARD}")
    r = agent("solve", "--board", str(path), "--json", cwd=tmp_path)
    assert_handled(r, 0)
    plans = json.loads(r.out)["plans"]
    assert any(p["kind"] == "A" and p["steps_gained"] >= 3**20 for p in plans)


BOARD_FILES = {
    "non-UTF-8": b"AB\xff\xfeAB\nABAB\n",
    "binary junk": bytes(range(256)) * 4,
    "NUL bytes": b"\x00" * 64,
    "empty": b"",
    "only comments": b"# nothing here\n# at all\n",
    "too big": b"A" * (5 * 1024 * 1024),
    "one huge row": b"A" * 100_000 + b"\n",
    "a folder": None,
}
BOARD_GAMES = {
    "match3": ("--board",),
    "junqi": ("--from", "0,0", "--to", "1,0", "--board"),
    "lightsout": ("--puzzle", "lightsout", "--board"),
}


@pytest.mark.parametrize("game", list(BOARD_GAMES))
@pytest.mark.parametrize("variant", list(BOARD_FILES))
def test_broken_board_file_is_refused(tmp_path, game, variant):
    path = tmp_path / "board.txt"
    content = BOARD_FILES[variant]
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    r = agent("solve", "--game", game, *BOARD_GAMES[game], str(path), cwd=tmp_path)
    assert_handled(r, 1, says="board.txt")


@pytest.mark.parametrize("game", list(BOARD_GAMES))
def test_non_utf8_board_on_stdin_is_refused(tmp_path, game):
    p = subprocess.run(agent_cmd("solve", "--game", game, *BOARD_GAMES[game], "-"), cwd=tmp_path,
                       env=agent_env(None, tmp_path), input=b"AB\xff\xfe\n", capture_output=True, timeout=120)  # fmt: skip
    r = Result(("solve", game), p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))
    assert_handled(r, 1, says=("stdin", "UTF-8"))


# -- images ---------------------------------------------------------------------------------


def _chunk(tag: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))


def png_bomb(width: int = 20000, height: int = 20000) -> bytes:
    """A valid 1-bit grey PNG of width x height: some 50 KB, 1.2 GB once decoded to BGR."""
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte and the packed row
    z = zlib.compressobj(9)
    idat = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def jpeg_bomb() -> bytes:
    """A JPEG header declaring 65000 x 65000 pixels (the data after it does not matter)."""
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, 65000, 65000, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + sof + b"\xff\xd9"


def bmp_bomb() -> bytes:
    """A BMP header declaring 30000 x -30000 (top-down) pixels at 24 bits, without the pixels."""
    info = struct.pack("<IiiHHIIiiII", 40, 30000, -30000, 1, 24, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 0, 0, 0, 54) + info


def webp_bomb() -> bytes:
    """A WebP (VP8X) header declaring a 16384 x 16384 canvas."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (16383).to_bytes(3, "little") * 2
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


def _good_png() -> bytes:
    ok, buf = cv2.imencode(".png", np.random.default_rng(0).integers(0, 256, (60, 40, 3), dtype=np.uint8))
    assert ok
    return buf.tobytes()


IMAGES = {
    "PNG pixel bomb": lambda tmp: png_bomb(),
    "JPEG pixel bomb": lambda tmp: jpeg_bomb(),
    "BMP pixel bomb": lambda tmp: bmp_bomb(),
    "WebP pixel bomb": lambda tmp: webp_bomb(),
    "PNG of 0 x 0": lambda tmp: png_bomb(0, 0),
    "truncated PNG": lambda tmp: _good_png()[: len(_good_png()) // 2],
    "PNG header only": lambda tmp: _good_png()[:20],
    "zero bytes": lambda tmp: b"",
    "garbage": lambda tmp: bytes(range(256)) * 64,
    "text": lambda tmp: b"this is not a picture\n",
    "a folder": None,
}


@pytest.mark.parametrize("command", ["read", "calibrate"])
@pytest.mark.parametrize("variant", list(IMAGES))
def test_broken_image_is_refused_before_decoding(tmp_path, command, variant):
    path = tmp_path / "shot.png"
    make = IMAGES[variant]
    if make is None:
        path.mkdir()
    else:
        path.write_bytes(make(tmp_path))
    r = agent(command, "--image", str(path), cwd=tmp_path, timeout=120)
    assert_handled(r, 1, says="shot.png")
    if "bomb" in variant:
        assert "pixels" in r.err
