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
