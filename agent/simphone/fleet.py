"""N simulated phones on the wire, connected to an adb server, for `agent farm --sim N`.

Each phone is its own `agent sim serve` process with its own seed, so the farm drives
them exactly as it drives real phones: through the adb server. Each runs in its own
process group, out of reach of a terminal's Ctrl-C (its workers must stop first), so the
fleet ends them itself however it is left: normally, on an error, or on a signal.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from collections.abc import Sequence
from typing import IO, Any

from agent import signals
from agent.simphone.launch import end_processes, free_port, log_file, start_sim_phone

# Enough steps that a farm run's --moves, not the game, decides when a phone is done
# (for a game whose simulated phone counts steps).
FARM_STEPS = 100_000


class SimFleet:
    def __init__(
        self, n: int, target: Any, profiles: Path, game: str = "match3", game_args: Sequence[str] = (),
        log_dir: Path | None = None, size: str = "1080x2400", base_seed: int = 0,
    ) -> None:  # fmt: skip
        self.n, self.target, self.profiles, self.size = n, target, Path(profiles), size
        self.game, self.game_args = game, tuple(game_args)  # `agent sim serve` options for the game
        self.log_dir = Path(log_dir) if log_dir else Path("runs") / "phones"
        self.base_seed = base_seed
        self.ports: list[int] = []
        self.procs: list[subprocess.Popen[bytes] | None] = []
        self._logs: list[IO[bytes]] = []

    @property
    def serials(self) -> list[str]:
        return [f"127.0.0.1:{p}" for p in self.ports]

    def _args(self, i: int) -> list[str]:
        args = ["--game", self.game, "--seed", str(self.base_seed + i), "--size", self.size,
                "--profiles", str(self.profiles)]  # fmt: skip
        return args + list(self.game_args)

    def __enter__(self) -> "SimFleet":
        from agent.device.adb import ensure_server

        # Private servers must not scan the emulator ports (5555-5585) for strangers.
        os.environ.setdefault("ADB_LOCAL_TRANSPORT_MAX_PORT", "5554")
        try:
            ensure_server(self.target)
            for i in range(self.n):
                port = free_port()
                log = log_file(self.log_dir, f"phone-{i}.log")
                self._logs.append(log)
                self.ports.append(port)
                start_sim_phone(port, log, *self._args(i), adopt=self.procs.append)
                self.connect(i)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def connect(self, i: int) -> None:
        from agent.device.adb import connect_tcp

        connect_tcp(self.serials[i], self.target)

    def kill(self, i: int) -> None:
        """Fault injection: the phone dies without a word."""
        proc = self.procs[i]
        if proc is not None:
            proc.kill()
            proc.wait(10)
            if proc.stdin is not None:
                proc.stdin.close()
            self.procs[i] = None

    def restart(self, i: int) -> None:
        """The phone comes back on the same port (a fresh game)."""
        self.kill(i)

        def adopt(proc: subprocess.Popen[bytes]) -> None:
            self.procs[i] = proc

        start_sim_phone(self.ports[i], self._logs[i], *self._args(i), adopt=adopt)

    def __exit__(self, *exc: object) -> None:
        import adbutils

        # All at once (a signal meanwhile waits: no phone may be left running).
        with signals.deferred():
            end_processes([p for p in self.procs if p is not None])
            self.procs = [None] * len(self.procs)
            client = adbutils.AdbClient(host=self.target.host, port=self.target.port, socket_timeout=5)
            for serial in self.serials:
                if signals.escalated():
                    break  # told twice to stop: the server forgets them on its own
                try:
                    client.disconnect(serial)
                except Exception:
                    pass  # the server may be gone already; nothing of ours is left behind
            for log in self._logs:
                log.close()
