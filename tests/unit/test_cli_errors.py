"""Expected failures through the real `agent` entry point: a clear message with a fix,
a non-zero exit code, and no traceback. Uses a private adb server (integration tier)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def agent(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=120,
        env=dict(os.environ), cwd=cwd,
    )


@pytest.mark.integration
def test_play_without_a_phone_says_how_to_fix_it(private_adb_port, tmp_path):
    r = agent("play", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "error: no device" in r.stderr
    assert "agent play --sim" in r.stderr  # the fix names the simulated phone
    assert "Traceback" not in r.stderr + r.stdout


@pytest.mark.integration
def test_play_with_an_unknown_serial(private_adb_port, tmp_path):
    r = agent("play", "--serial", "R58N000000", cwd=tmp_path)
    assert r.returncode == 3
    assert "no device 'R58N000000'" in r.stderr and "adb lists" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.integration
def test_devices_with_none_attached(private_adb_port):
    r = agent("devices")
    assert r.returncode == 0 and "no devices" in r.stdout
    r = agent("devices", "--json")
    assert r.returncode == 0 and r.stdout.strip() == "[]"


def test_a_bad_adb_server_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "adb")
    r = agent("devices")
    assert r.returncode == 3
    assert "error:" in r.stderr and "ANDROID_ADB_SERVER_PORT" in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_signal_wrapped_by_a_class_body_being_imported_is_still_a_clean_stop(monkeypatch):
    """A SIGHUP that lands while a dataclass is being created comes out of the import as
    "RuntimeError: Error calling __set_name__"; the command still exits 129."""
    import signal as signal_mod

    import agent.cli as cli
    from agent import signals

    class Field:
        def __set_name__(self, owner, name):
            raise signals.Interrupted(signal_mod.SIGHUP)

    def command():
        class Summary:  # noqa: F841 - the class body is what raises
            checks = Field()

    stop = signals.StopState(received=[signal_mod.SIGHUP])
    monkeypatch.setattr(cli, "app", command)
    assert cli._run(stop) == signals.exit_code(signal_mod.SIGHUP) == 129

    def bug():
        raise RuntimeError("a bug, not a signal")

    monkeypatch.setattr(cli, "app", bug)
    with pytest.raises(RuntimeError, match="a bug"):
        cli._run(signals.StopState(received=[signal_mod.SIGHUP]))


def test_output_to_a_pipe_is_not_squeezed_into_80_columns(monkeypatch):
    """A bench's table piped to a log kept Rich's 80 columns and wrapped into fragments."""
    import io

    from agent.cli.app import _MIN_WIDTH, _PIPED_WIDTH, _width

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("COLUMNS", raising=False)
    assert _width(io.StringIO()) == _PIPED_WIDTH > 80
    assert _width(Terminal()) is None  # a terminal: Rich asks it
    monkeypatch.setenv("COLUMNS", "100")
    assert _width(io.StringIO()) == 100  # the user's word stands
    monkeypatch.setenv("COLUMNS", "3")
    assert _width(io.StringIO()) == _MIN_WIDTH
