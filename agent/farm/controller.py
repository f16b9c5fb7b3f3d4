"""The farm controller: finds devices on one or more adb servers, runs one worker process
per device, retries devices that fail with backoff, quarantines the ones that keep
failing, and keeps a live table and the run's summary.

A device is keyed by `host:port/serial`, so the same serial on two adb servers (two
hosts) stays two devices.

Ctrl-C, SIGTERM or SIGHUP (`agent.signals`) stop the farm cleanly: every worker is told
to stop after its move and waited for; a second signal stops the waiting: the workers
are sent SIGTERM (each stops at once, with its stop line), then killed. A worker that
dies before its stop line (killed, crashed) gets one written for it, so every journal
ends with why, and the summary says the farm was interrupted and by which signal.
"""

from __future__ import annotations

import json
import queue as queue_mod
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agent import signals
from agent.farm.worker import WorkerSpec
from agent.play.journal import end_unfinished, journal_name, last_stop_frames

# Terminal states: the farm ends when every known device is in one of them.
DONE, QUARANTINED, SKIPPED, FAILED = "done", "quarantined", "skipped", "failed"
TERMINAL = {DONE, QUARANTINED, SKIPPED, FAILED}
STOPPED = "stopped"  # the farm was stopped before this device was done

# How long workers may take to stop after "stop" (one move), and after SIGTERM (at once).
STOP_WAIT_S = 15.0
END_WAIT_S = 3.0


@dataclass(frozen=True)
class FarmOptions:
    moves: int | None = None
    game: str = "match3"
    settings: dict[str, Any] = field(default_factory=dict)  # the game's options, validated by the registry
    seed: int = 0
    profiles: Path = Path("device_profiles")
    max_failures: int = 3  # consecutive failures before quarantine
    backoff_s: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    discover_every_s: float = 2.0
    serials: tuple[str, ...] = ()  # only these (empty: every device the servers list)
    calibrate: bool = False  # a device with no profile is calibrated first, not skipped
    launch: bool = False  # each worker starts the game and brings it back (agent play --launch)
    levels: int | None = None  # a game of levels: each phone stops once it has won this many (agent play --levels)
    record: dict[str, Any] | None = None  # each worker keeps its frames (RecordOptions as a dict)
    view: bool = False  # each worker serves a live view (agent.farm.view shows them all)


@dataclass
class DeviceRow:
    key: str
    host: str
    port: int
    serial: str
    model: str = "-"
    state: str = "starting"
    moves: int = 0
    score: int | None = None
    confirmed: int = 0  # moves the screen showed as predicted
    counts: dict[str, int] = field(default_factory=dict)  # the game's own tallies
    fps: float = 0.0
    last_error: str = ""
    base_moves: int = 0  # made by earlier workers of this device (before a failure)
    base_confirmed: int = 0
    base_counts: dict[str, int] = field(default_factory=dict)
    failures: int = 0  # consecutive
    total_failures: int = 0
    retry_at: float = 0.0
    runs: int = 0
    stop_reason: str = ""
    decision_ms: list[float] = field(default_factory=list)
    play_s: float = 0.0
    process: Any = field(default=None, repr=False)
    view_url: str = ""  # its worker's live view (agent farm --view)
    summaries: list[dict] = field(default_factory=list)
    node: str = ""  # the Ray node the phone is attached to (agent farm --ray); "" on a local farm
    exit_code: int | None = None  # its last run's, as `agent play` would exit (None: no run ended)

    def as_dict(self) -> dict:
        out = self._as_dict()
        return {"node": self.node, **out} if self.node else out

    def _as_dict(self) -> dict:
        return {
            "serial": self.serial, "adb": f"{self.host}:{self.port}", "model": self.model, "state": self.state,
            "moves": self.moves, "confirmed": self.confirmed, "score": self.score, **self.counts,
            "failures": self.total_failures, "runs": self.runs, "last_error": self.last_error,
            "stop_reason": self.stop_reason, "play_s": round(self.play_s, 3),
            **({} if self.exit_code is None else {"exit_code": self.exit_code}),
        }


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}


class Farm:
    terminal_states: frozenset[str] = frozenset(TERMINAL)  # a row in one of these plays no more

    def __init__(
        self,
        targets: list[Any],  # AdbTarget
        run_dir: Path,
        options: FarmOptions = FarmOptions(),
        reconnect: Callable[[Any, str], None] | None = None,
        list_fn: Callable[[Any], list] | None = None,
    ) -> None:
        from agent.device.adb import list_devices

        if not options.settings:
            from dataclasses import replace

            from agent.games.registry import get_game, settings

            # The game's defaults, the same as `agent play` on a phone.
            options = replace(options, settings=settings(get_game(options.game), {}, sim=False))
        self.targets, self.run_dir, self.options = targets, Path(run_dir), options
        self.rows: dict[str, DeviceRow] = {}
        self._queue: queue_mod.Queue = queue_mod.Queue()
        self._stop = threading.Event()
        self._list = list_fn or (lambda t: list_devices(t, timeout_s=5.0))
        self._reconnect = reconnect or _reconnect_tcp
        self._last_discovery = -1e9
        self.started = time.time()
        self.events: list[dict] = []
        self.interrupted = False
        self.stop_signal: int | None = None  # what interrupted the farm

    # -- discovery ------------------------------------------------------------------
    def discover(self) -> None:
        """Devices that appeared since the last look join the farm."""
        self._last_discovery = time.monotonic()
        for target in self.targets:
            try:
                found = self._list(target)
            except Exception as exc:  # one unreachable server must not stop the others
                self._event("adb_server_error", adb=f"{target.host}:{target.port}", error=str(exc))
                continue
            for info in found:
                if self.options.serials and info.serial not in self.options.serials:
                    continue
                key = f"{target.host}:{target.port}/{info.serial}"
                row = self.rows.get(key)
                if row is None:
                    row = self.rows[key] = DeviceRow(key, target.host, target.port, info.serial, model=info.model or "-")
                    self._event("joined", key=key, state=info.state)
                    if info.state != "device":
                        row.state = "waiting"
                        row.last_error = f"adb says {info.state}"

    # -- workers ----------------------------------------------------------------------
    def _start(self, row: DeviceRow) -> None:
        remaining = None if self.options.moves is None else self.options.moves - row.moves
        spec = WorkerSpec(
            key=row.key, host=row.host, port=row.port, serial=row.serial, game=self.options.game,
            settings=dict(self.options.settings), seed=self.options.seed, moves=remaining,
            journal=str(self.run_dir / journal_name(row.key)), profiles=str(self.options.profiles),
            calibrate=self.options.calibrate, launch=self.options.launch, record=self.options.record,
            view=self.options.view, levels=self.options.levels,
        )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.run_dir / (journal_name(row.key)[: -len(".jsonl")] + ".worker.log"), "ab")
        row.process = subprocess.Popen(
            [sys.executable, "-m", "agent.farm.worker", spec.to_json()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1,
        )
        log.close()  # the child holds its own copy
        threading.Thread(target=self._pump, args=(row.process,), daemon=True).start()
        row.runs += 1
        row.state = "starting" if row.runs == 1 else "rejoining"

    def _pump(self, proc: subprocess.Popen) -> None:
        """One reader thread per worker: its JSON lines onto the controller's queue."""
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                self._queue.put(json.loads(line))
            except json.JSONDecodeError:
                continue  # a stray print from a library: not an event
        self._queue.put({"kind": "eof", "key": None, "pid": proc.pid})

    def _event(self, kind: str, **fields: Any) -> None:
        self.events.append({"t": round(time.time() - self.started, 3), "event": kind, **fields})

    def _handle(self, msg: dict) -> None:
        row = self.rows.get(msg.get("key") or "")
        if row is None:
            return
        kind = msg["kind"]
        if kind == "started":
            row.model, row.state = msg["model"], "playing"
        elif kind == "view":
            row.view_url = msg["url"]
            self._event("view", key=row.key, url=msg["url"])
        elif kind == "calibrating":
            row.state = "calibrating"
            self._event("calibrating", key=row.key)
        elif kind == "calibrated":
            row.state = "playing"
            self._event("calibrated", key=row.key, profile=msg["profile"])
        elif kind == "status":
            if row.failures:
                self._event("recovered", key=row.key)
            row.failures = 0
            row.state = "playing"
            row.moves = row.base_moves + msg["moves"]
            row.confirmed = row.base_confirmed + msg["confirmed"]
            row.score, row.fps = msg["score"], msg["fps"]
            row.counts = _add(row.base_counts, msg["counts"])
        elif kind == "done":
            s = msg["summary"]
            row.summaries.append(s)
            row.moves = row.base_moves + s["moves"]
            row.confirmed = row.base_confirmed + s["confirmed"]
            row.counts = _add(row.base_counts, msg["counts"])
            row.score, row.stop_reason = s["score"], s["stop_reason"]
            row.decision_ms.extend(msg["decision_ms"])
            row.play_s += msg["elapsed_s"]
            # a run that ended without doing what was asked (its game over before any move,
            # its screen unrecognised) is no device done: its exit code is `agent play`'s
            row.exit_code = int(msg.get("exit_code", 0))
            row.state = DONE if row.exit_code == 0 else FAILED
            if row.exit_code:
                row.last_error = f"stopped: {s['stop_reason']} (exit {row.exit_code}, as agent play would)"
            self._event("done", key=row.key, stop_reason=s["stop_reason"], moves=row.moves, exit_code=row.exit_code)
        elif kind == "error":
            row.last_error = msg["error"]
            self._event("error", key=row.key, error=msg["error"], error_class=msg["error_class"])
            if not msg["retry"]:
                row.state = SKIPPED if msg["error_class"] == "ProfileError" else FAILED
                return
            self._fail(row)

    def _fail(self, row: DeviceRow) -> None:
        # Moves already made stay made: the retry plays only what is left.
        row.base_moves, row.base_confirmed, row.base_counts = row.moves, row.confirmed, dict(row.counts)
        row.failures += 1
        row.total_failures += 1
        if row.failures >= self.options.max_failures:
            row.state = QUARANTINED
            # The frames its last run kept when it stopped: what the phone showed.
            frames = last_stop_frames(self.run_dir / journal_name(row.key))
            self._event("quarantined", key=row.key, failures=row.failures, **({"frames": frames} if frames else {}))
            return
        delay = self.options.backoff_s[min(row.failures - 1, len(self.options.backoff_s) - 1)]
        row.retry_at = time.monotonic() + delay
        row.state = "retrying"
        self._event("retry_scheduled", key=row.key, in_s=delay, failure=row.failures)

    def _tick(self) -> None:
        while True:
            try:
                self._handle(self._queue.get_nowait())
            except queue_mod.Empty:
                break
        now = time.monotonic()
        for row in self.rows.values():
            proc = row.process
            if proc is not None and proc.poll() is not None:
                row.process = None
                self._reap(row, proc)
                # A worker that died without a word (killed, crashed interpreter) failed,
                # unless the farm is stopping: then it stopped.
                if row.state not in TERMINAL and row.state != "retrying":
                    self._drain_for(row)
                    if row.state not in TERMINAL and row.state != "retrying":
                        if not (self._stop.is_set() and proc.returncode == 0):
                            row.last_error = row.last_error or f"worker exited with code {proc.returncode}"
                        if not self._stop.is_set():
                            self._fail(row)
            if row.process is None and row.state == "starting" and not self._stop.is_set():
                self._start(row)
            elif row.process is None and row.state == "retrying" and now >= row.retry_at and not self._stop.is_set():
                try:
                    self._reconnect(_target_of(row), row.serial)
                except Exception as exc:
                    row.last_error = f"reconnect failed: {exc}"
                self._start(row)
        if now - self._last_discovery >= self.options.discover_every_s and not self._stop.is_set():
            self.discover()
            for row in self.rows.values():
                if row.state == "waiting":
                    row.state = "starting"  # try it: the worker reports what is wrong

    def _reap(self, row: DeviceRow, proc: subprocess.Popen) -> None:
        """A worker has exited: if its journal's last run has no stop line, write one."""
        code = proc.poll()
        if self.interrupted and (code is None or code < 0):
            kind, why = "interrupted", f"{signals.reason(self.stop_signal or signal.SIGINT)}: the farm ended the worker"
        else:
            kind, why = "crashed", "the worker died"
        try:
            end_unfinished(self.run_dir / journal_name(row.key), f"{why} (exit status {code}) before its stop line",
                           kind, written_by="farm")  # fmt: skip
        except OSError as exc:
            self._event("journal_error", key=row.key, error=str(exc))

    def _drain_for(self, row: DeviceRow) -> None:
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            try:
                self._handle(self._queue.get(timeout=0.05))
            except queue_mod.Empty:
                break

    @property
    def finished(self) -> bool:
        return bool(self.rows) and all(r.state in self.terminal_states and r.process is None for r in self.rows.values())

    def stop(self) -> None:
        """Ask every worker to stop after its current move."""
        self._stop.set()
        for row in self.rows.values():
            if row.process is not None and row.process.stdin is not None:
                try:
                    row.process.stdin.write("stop\n")
                    row.process.stdin.flush()
                except OSError:
                    pass  # already gone

    def run(self, on_tick: Callable[["Farm"], None] | None = None, tick_s: float = 0.2,
            give_up_after_s: float = 10.0) -> dict:  # fmt: skip
        """Play until every device is finished, quarantined or skipped. With no device at
        all after `give_up_after_s`, stop and say so."""
        first_look = time.monotonic()
        try:
            try:
                self.discover()
                while not self.finished:
                    self._tick()
                    if on_tick:
                        on_tick(self)
                    if not self.rows and time.monotonic() - first_look > give_up_after_s:
                        break
                    if self._stop.is_set() and all(r.process is None for r in self.rows.values()):
                        break
                    time.sleep(tick_s)
            except KeyboardInterrupt as exc:
                self.mark_interrupted(exc)
            finally:
                # However the loop ended (a signal, a bug, a display that failed), no worker
                # is left behind; a signal now waits until they are all stopped.
                with signals.deferred():
                    self.stop()
                    self._wait_workers(STOP_WAIT_S)
                    if on_tick:
                        on_tick(self)
        except KeyboardInterrupt as exc:  # came while the farm was stopping
            self.mark_interrupted(exc)
        return self.summary()

    def mark_interrupted(self, exc: BaseException) -> None:
        if not self.interrupted:
            self.interrupted, self.stop_signal = True, signals.signal_of(exc)
            self._event("interrupted", signal=signals.name(self.stop_signal))

    def _wait_workers(self, timeout_s: float) -> None:
        """Wait for every worker to stop. After `timeout_s`, or at once on a second
        signal, end them (`_end_worker`: each stops now, with its stop line), then give up
        on those that still run (`_abandon_worker`)."""
        deadline = time.monotonic() + timeout_s
        ending = False
        while any(r.process is not None for r in self.rows.values()):
            now = time.monotonic()
            if not ending and (now >= deadline or signals.escalated()):
                ending, deadline = True, now + END_WAIT_S
                self._event("ending_workers", why="a second signal" if signals.escalated() else "did not stop in time")
                for row in self.rows.values():
                    if row.process is not None:
                        self._end_worker(row)
            elif ending and now >= deadline:
                break
            self._tick()
            time.sleep(0.05)
        for row in self.rows.values():
            if row.process is not None:
                self._abandon_worker(row)
                if row.state not in self.terminal_states:
                    row.state = FAILED
                    row.last_error = row.last_error or "did not stop in time"
        self._last_words()
        for row in self.rows.values():
            if row.state not in self.terminal_states:
                row.state = STOPPED

    def _end_worker(self, row: DeviceRow) -> None:
        _send_signal(row.process, signal.SIGTERM)

    def _abandon_worker(self, row: DeviceRow) -> None:
        """A worker that would not stop even so: killed, its journal given its stop line."""
        proc = row.process
        _send_signal(proc, signal.SIGKILL)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        row.process = None
        self._reap(row, proc)

    def _last_words(self) -> None:
        self._tick()  # what the workers that stopped said last

    def summary(self) -> dict:
        rows = [r.as_dict() for r in self.rows.values()]
        all_ms = sorted(ms for r in self.rows.values() for ms in r.decision_ms)
        elapsed = time.time() - self.started
        total_moves = sum(r.moves for r in self.rows.values())
        return {
            "run_dir": str(self.run_dir),
            "elapsed_s": round(elapsed, 3),
            "interrupted": self.interrupted,
            "signal": None if self.stop_signal is None else signals.name(self.stop_signal),
            "devices": rows,
            "totals": {
                "devices": len(rows),
                "moves": total_moves,
                "decisions_per_s": round(total_moves / elapsed, 3) if elapsed > 0 else 0.0,
                "by_state": {s: sum(1 for r in rows if r["state"] == s) for s in sorted({r["state"] for r in rows})},
                "decision_ms_median": _percentile(all_ms, 50),
                "decision_ms_p95": _percentile(all_ms, 95),
            },
            "events": self.events,
        }


def _send_signal(proc: subprocess.Popen, signum: int) -> None:
    try:
        proc.send_signal(signum)
    except OSError:
        pass  # already gone


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return round(float(np.percentile(values, q)), 3)


def _target_of(row: DeviceRow):
    from agent.device.adb import AdbTarget

    return AdbTarget(row.host, row.port)


def _reconnect_tcp(target: Any, serial: str) -> None:
    """A TCP device that went offline comes back at once after disconnect + connect (the
    server's own retry takes up to a minute)."""
    if ":" not in serial:
        return
    import adbutils

    client = adbutils.AdbClient(host=target.host, port=target.port, socket_timeout=5)
    try:
        client.disconnect(serial)
    except Exception:
        pass
    client.connect(serial, timeout=5)
