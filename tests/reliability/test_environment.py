"""Environment variables set badly (by a shell profile, a CI runner or a container) give a
clear error naming the variable, or are survived, never a traceback or silence."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

from redteam import agent, assert_handled

DEFAULT_ADB_PORT = 5037


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def default_adb_server_left_as_found():
    """An empty port means the default server, which `agent devices` starts when none runs:
    one this test started is ended, so the suite leaves the machine's adb as it found it."""
    was_running = _answers(DEFAULT_ADB_PORT)
    yield
    if not was_running and _answers(DEFAULT_ADB_PORT):
        import adbutils

        exe = adbutils.adb_path()
        subprocess.run([exe, "-P", str(DEFAULT_ADB_PORT), "kill-server"], capture_output=True,
                       timeout=20, env={k: v for k, v in os.environ.items() if k != "ANDROID_ADB_SERVER_PORT"})


@pytest.mark.parametrize("port", ["abc", "99999", "-1", "5037x"])
def test_bad_adb_server_port(tmp_path, port):
    r = agent("devices", cwd=tmp_path, env={"ANDROID_ADB_SERVER_PORT": port}, timeout=60)
    assert_handled(r, 3, says="ANDROID_ADB_SERVER_PORT")


def test_empty_adb_server_port_is_the_default_server(tmp_path, default_adb_server_left_as_found):
    r = agent("devices", cwd=tmp_path, env={"ANDROID_ADB_SERVER_PORT": ""}, timeout=60)
    assert_handled(r, (0, 3))  # the default server may have no phone, or may not start here


@pytest.mark.parametrize("columns", ["0", "1", "-5", "abc", "100000"])
def test_odd_terminal_width_still_shows_the_result(tmp_path, columns):
    r = agent("play", "--sim", "--moves", "1", cwd=tmp_path, env={"COLUMNS": columns}, timeout=120)
    assert_handled(r, 0)
    assert "moves made" in " ".join(r.out.split()), r.describe()


def test_unwritable_profiles_folder_from_the_environment(tmp_path):
    r = agent("play", "--sim", "--moves", "1", cwd=tmp_path, env={"PUZZLE_AGENT_PROFILES": "/proc/nope"}, timeout=60)
    assert_handled(r, 2, says=("--profiles", "/proc/nope"))


def test_serial_from_the_environment_is_named_whole(tmp_path, private_adb_port):
    r = agent("play", "--moves", "1", cwd=tmp_path, env={"ANDROID_SERIAL": "[/red]gone"}, timeout=60)
    assert_handled(r, 3, says="[/red]gone")


def test_json_output_survives_a_narrow_terminal(tmp_path):
    r = agent("play", "--sim", "--moves", "1", "--json", cwd=tmp_path, env={"COLUMNS": "1"}, timeout=120)
    assert_handled(r, 0)
    assert json.loads(r.out.splitlines()[-1])["moves"] == 1
