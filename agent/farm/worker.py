"""One farm worker: a process (`python -m agent.farm.worker SPEC_JSON`) that plays one
device and reports to the controller.

It talks to the controller only through JSON lines: events on stdout, and "stop" (or
end of input) on stdin, so a hung or crashed device costs one process, never the farm.
A first Ctrl-C (a terminal sends it to the whole group, the controller too) stops the
worker between two moves, as the controller's "stop" does; SIGTERM, SIGHUP or a second
Ctrl-C stop it at once (the controller sends SIGTERM when it stops waiting). Either way
its journal ends with a stop line. If the controller is gone (end of input, or stdout a
broken pipe) the worker stops too, quietly. A plain subprocess, not multiprocessing:
spawn re-runs the parent's main script, which breaks when `agent` is a shell shim (pyenv).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent import signals
from agent.errors import AgentError, ProfileError
from agent.vision.settle import still_screen


@dataclass(frozen=True)
class WorkerSpec:
    key: str  # "host:port/serial": unique across adb servers
    host: str
    port: int
    serial: str
    game: str
    settings: dict[str, Any]  # the game's options, validated by the registry in the controller
    seed: int
    moves: int | None  # moves still to make (None: play to the end)
    journal: str
    profiles: str
    calibrate: bool = False  # no profile for this device: calibrate on its screen first
    launch: bool = False  # start the game and bring it back when another app is in front
    record: dict[str, Any] | None = None  # keep the frames (agent.play.recording.RecordOptions as a dict)
    view: bool = False  # serve a live view on a free 127.0.0.1 port, reported as a "view" event
    levels: int | None = None  # a game of levels: stop once this many are won

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "WorkerSpec":
        return cls(**json.loads(text))


class _Out:
    """Events as JSON lines on stdout; one lock so lines never interleave. When nobody
    reads them any more (the controller died), the worker is asked to stop, and later
    events are dropped."""

    def __init__(self, stop: threading.Event) -> None:
        self.lock = threading.Lock()
        self.stop = stop
        self.gone = False

    def put(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":"))
        with self.lock, signals.deferred():  # a signal must not cut a line in two
            if self.gone:
                return
            try:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            except OSError as exc:
                if exc.errno not in (errno.EPIPE, errno.EINVAL):
                    raise
                self._parent_gone()

    def _parent_gone(self) -> None:
        self.gone = True
        self.stop.set()
        # Point stdout at /dev/null so nothing (the interpreter's own flush at exit
        # included) writes to the broken pipe again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _send(queue: Any, spec: WorkerSpec, kind: str, **fields: Any) -> None:
    queue.put({"kind": kind, "key": spec.key, "t": time.time(), **fields})


class _CountingDevice:
    """Counts captures so the controller can show frames per second."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.captures = 0
        self.serial, self.model = device.serial, device.model

    def screen_size(self) -> tuple[int, int]:
        return self.device.screen_size()

    def screencap(self):
        frame = self.device.screencap()
        self.captures += 1
        return frame

    def tap(self, x: int, y: int) -> None:
        self.device.tap(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        self.device.swipe(x1, y1, x2, y2, duration_ms)

    # AppControl: the play loop dismisses with Back and brings the game back to the front
    def back(self) -> None:
        self.device.back()

    def foreground(self) -> str | None:
        return self.device.foreground()

    def launch(self, package: str) -> None:
        self.device.launch(package)


def worker_main(spec: WorkerSpec, queue: Any, stop_event: Any, journal_tee: Any = None) -> None:
    """Play the spec's device, every outcome an event on `queue` (`journal_tee`: see `play`)."""
    try:
        _play(spec, queue, stop_event, journal_tee)
    except KeyboardInterrupt as exc:
        # Stopped before or after the loop (which ends its own journal): nothing to report.
        print(f"worker {spec.key}: {signals.reason(signals.signal_of(exc))}", file=sys.stderr)
    except AgentError as exc:
        _send(queue, spec, "error", error=str(exc), hint=exc.hint, error_class=type(exc).__name__,
              retry=not isinstance(exc, ProfileError))  # fmt: skip
    except Exception as exc:  # a bug must not take the farm down; report it whole
        _send(queue, spec, "error", error=f"{type(exc).__name__}: {exc}", hint="", error_class="bug", retry=False)


def _play(spec: WorkerSpec, queue: Any, stop_event: Any, journal_tee: Any = None) -> None:
    from agent.device.adb import AdbDevice, AdbTarget
    from agent.device.clock import RealClock
    from agent.games.registry import get_game
    from agent.play.recording import RecordOptions
    from agent.play.run import device_run, play
    from agent.play.stats import PlaySummary, exit_code

    game = get_game(spec.game)
    device = _CountingDevice(AdbDevice(spec.serial, AdbTarget(spec.host, spec.port)))
    w, h = device.screen_size()
    _send(queue, spec, "started", model=device.model, size=[w, h])
    try:
        run = device_run(game, device, spec.settings, spec.seed, Path(spec.profiles))
    except ProfileError as exc:
        if not spec.calibrate:
            raise ProfileError(str(exc), hint=f"{exc.hint}; or let the farm do it: agent farm --calibrate") from None
        _send(queue, spec, "calibrating", model=device.model)
        path = calibrate_device(device, spec.game, Path(spec.profiles), RealClock())
        _send(queue, spec, "calibrated", profile=str(path))
        run = device_run(game, device, spec.settings, spec.seed, Path(spec.profiles))
    # Each capture method timed before any move: the loop's waits scale with the fastest.
    device.device.choose_capture()
    started = time.monotonic()

    def on_move(summary: PlaySummary) -> None:
        elapsed = max(1e-6, time.monotonic() - started)
        _send(queue, spec, "status", moves=summary.moves, confirmed=summary.confirmed, score=summary.score,
              counts=summary.counts, fps=device.captures / elapsed, decisions_per_s=summary.moves / elapsed,
              decision_ms=summary.decision_ms[-1] if summary.decision_ms else None)  # fmt: skip

    journal = Path(spec.journal)
    record = None if spec.record is None else RecordOptions(**spec.record)
    with ExitStack() as stack:
        view = None
        if spec.view:
            from agent.play.view import LiveView

            view = stack.enter_context(LiveView(title=f"{device.model} ({spec.serial})", limit=spec.moves))
            _send(queue, spec, "view", url=view.url)
        levels = spec.levels if run.has_levels else None  # a phone whose game has no levels plays to its end
        summary = play(run, run.options(moves=spec.moves, launch=spec.launch, levels=levels), journal, on_move=on_move,
                       should_stop=stop_event.is_set, record=record, watcher=view, journal_tee=journal_tee,
                       adb=f"{spec.host}:{spec.port}",
                       capture={"mode": device.device.capture_mode, "ms": device.device.capture_report()})  # fmt: skip
    _send(queue, spec, "done", summary=summary.as_dict(), exit_code=exit_code(summary), counts=summary.counts,
          decision_ms=summary.decision_ms,
          elapsed_s=time.monotonic() - started, captures=device.captures)  # fmt: skip


def still_frame(device: Any, clock: Any) -> Any:
    """A frame of the device's screen once it has stopped moving (see `still_screen`)."""
    return still_screen(device.screencap, clock, device.serial)


def calibrate_device(device: Any, game: str, profiles: Path, clock: Any) -> Path:
    """Calibrate `game` on the device's screen and write its profile (and an overlay PNG
    beside it) to `profiles`. Unattended, so strict: if any cell reads with low
    confidence, only the overlay is written and the device is not played."""
    from agent.vision.calibrate import LOW_CONFIDENCE, calibrate_frame, class_infos
    from agent.files import save_png
    from agent.vision.overlay import draw_overlay
    from agent.vision.profile import DeviceProfile, load_profile, profile_filename, save_profile

    frame = still_frame(device, clock)
    h, w = frame.shape[:2]
    from agent.games.registry import role_hints

    cal = calibrate_frame(frame, game, hints=role_hints(game))
    path = profiles / profile_filename(device.model, w, h)
    b = cal.board
    legend = [(c.letter, c.name or c.role, c.colour) for c in class_infos(cal.profile, cal.reading.labels)]
    picture = draw_overlay(frame, b.bbox, cal.reading.labels, cal.reading.confidence, LOW_CONFIDENCE,
                           f"{game}: {b.rows}x{b.cols} board at {list(b.bbox)} (farm calibration)", legend=legend)
    overlay = save_png(picture, path.with_name(f"{path.stem}.{game}.png"))
    if cal.low_confidence:
        raise ProfileError(
            f"{device.serial}: calibration was unsure of {len(cal.low_confidence)} cells, so the device was not played",
            hint=f"check {overlay}, then run `agent calibrate --serial {device.serial}`",
        )
    try:
        existing = load_profile(path) if path.exists() else None
    except ProfileError:
        existing = None
    if existing is None or (existing.width, existing.height) != (w, h):
        existing = DeviceProfile(device.model, w, h, None, {})
    from agent.vision.screen_facts import with_screen_facts

    learned = with_screen_facts(cal.profile, frame, device.foreground() if hasattr(device, "foreground") else None)
    return save_profile(existing.with_game(learned), path)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    spec = WorkerSpec.from_json(args[0])
    stop = threading.Event()

    def watch_stdin() -> None:
        try:
            for line in sys.stdin:
                if line.strip() == "stop":
                    break
        except (OSError, ValueError):
            pass
        stop.set()  # "stop", or the controller went away

    threading.Thread(target=watch_stdin, daemon=True).start()
    with signals.stop_on_signals(request=stop.set, graceful=(signal.SIGINT,)):
        worker_main(spec, _Out(stop), stop)


if __name__ == "__main__":
    main()
