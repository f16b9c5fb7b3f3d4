"""Cause 2: error text is printed as it is, never as Rich markup: a path, serial or
profile key with [brackets] neither crashes the printer nor loses its brackets."""

from __future__ import annotations

import pytest

from redteam import agent, assert_handled

NAMES = ["shots/[/bold]x.png", "a/[bold]b.png", "[red]x[/red].png", "[/]", "[link=x]y[/link].png",
         "x\\[y].png", ":smile: [i]z.png"]


@pytest.mark.parametrize("name", NAMES)
def test_missing_image_is_named_whole(tmp_path, name):
    for command in (("read", "--image", name), ("calibrate", "--image", name, "--yes")):
        r = agent(*command, cwd=tmp_path, timeout=60)
        assert_handled(r, 1, says=name)


@pytest.mark.parametrize("serial", ["[/red]x", "[bold]phone[/bold]", "emulator-[5554]"])
def test_serial_with_brackets_is_named_whole(tmp_path, private_adb_port, serial):
    r = agent("play", "--serial", serial, "--moves", "1", cwd=tmp_path, timeout=60)
    assert_handled(r, 3, says=serial)


@pytest.mark.parametrize("name", ["[/x]b.txt", "b[bold].txt"])
def test_missing_board_file_is_named_whole(tmp_path, name):
    r = agent("solve", "--board", name, cwd=tmp_path, timeout=60)
    assert_handled(r, 1, says=name)


@pytest.mark.parametrize("runs", ["/proc/[/red]x", "/proc/[bold]y"])
def test_usage_error_keeps_brackets(tmp_path, runs):
    r = agent("play", "--sim", "--moves", "1", "--runs", runs, cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=runs)


# Profile errors quote TOML, whose tables and arrays are written in brackets.
_DEVICE = "[device]\nmodel = 'x'\nwidth = 1080\nheight = 2400\n"
PROFILES = {
    "[device]": "[games.match3]\nboard_bbox = [0, 0, 10, 10]\n",
    "[x0, y0, x1, y1]": _DEVICE + "[games.match3]\nrows = 8\ncols = 8\nboard_bbox = [1, 2]\n",
    "[1, 2]": _DEVICE + "[games.match3]\nrows = 8\ncols = 8\nboard_bbox = [1, 2]\n",
}


@pytest.mark.parametrize("text", list(PROFILES))
def test_profile_error_keeps_brackets(tmp_path, text):
    shot = tmp_path / "shot.png"
    assert agent("sim", "screenshot", str(shot), cwd=tmp_path).code == 0
    profile = tmp_path / "p[x].toml"
    profile.write_text(PROFILES[text])
    r = agent("read", "--image", str(shot), "--profile", str(profile), cwd=tmp_path, timeout=60)
    assert_handled(r, 1, says=(str(profile), text))
