"""`agent sim serve` ends cleanly on a stop signal at any moment once its port is open."""

from __future__ import annotations

import signal
import threading

from agent.cli import sim
from agent.signals import Interrupted


class _Server:
    def __init__(self, rounds: int = 0) -> None:
        self.rounds, self.connections, self.commands = rounds, 0, 0

    def wait(self, timeout: float) -> bool:
        if self.rounds <= 0:
            raise Interrupted(signal.SIGTERM)
        self.rounds -= 1
        return False


def _stop(signum: int) -> None:
    raise Interrupted(signum)


def test_a_stop_while_it_still_announces_itself_is_a_clean_stop():
    # Whoever sees the port open may stop the phone before its first line is printed.
    said = sim._serve_until_stopped(_Server(rounds=5), lambda: "", None, announce=lambda: _stop(signal.SIGINT))
    assert said == "stopped (SIGINT)"


def test_a_stop_while_serving_names_its_signal():
    ticks: list[int] = []
    said = sim._serve_until_stopped(_Server(rounds=2), lambda: "", None, tick=lambda: ticks.append(1))
    assert said == "stopped (SIGTERM)" and len(ticks) == 2


def test_serving_ends_when_standard_input_ends():
    ended = threading.Event()
    ended.set()
    assert "standard input ended" in sim._serve_until_stopped(_Server(rounds=5), lambda: "", ended)


def test_a_port_is_handed_out_once_though_the_system_gives_it_again(monkeypatch):
    """The system gives a port back as soon as its probe socket closes; two games started
    at once asked in turn and got the same one (one's adb server, the other's phone).
    free_port never hands out a port twice."""
    import socket

    from agent.simphone import launch

    given = iter([41001, 41001, 41001, 41002])

    class Probe:
        def __init__(self) -> None:
            self.port = next(given)

        def __enter__(self) -> Probe:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def bind(self, address: tuple[str, int]) -> None:
            assert address == ("127.0.0.1", 0)

        def getsockname(self) -> tuple[str, int]:
            return "127.0.0.1", self.port

    monkeypatch.setattr(launch, "_HANDED_OUT", set())
    monkeypatch.setattr(socket, "socket", Probe)
    assert [launch.free_port(), launch.free_port()] == [41001, 41002]
