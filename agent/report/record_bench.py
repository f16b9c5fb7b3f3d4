"""`agent bench record`: what seeing the agent's work costs it.

The same game on the simulated phone, played with and without `--record` (in turns, so a
busy machine slows both alike), then with the live view on and a viewer polling it, and
the report written from the recording. Figures: wall time per move with and without,
the recorder's own processor time per move against the move cycle, the recording's size,
the report's time, and how many captures the view's frame ever was behind the agent.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.games.registry import get_game, settings
from agent.play.journal import journal_name, new_run_dir
from agent.play.loop import PlayOptions
from agent.play.recording import RecordOptions
from agent.play.run import play, sim_run
from agent.play.stats import PlaySummary


@dataclass
class PlayTiming:
    record: bool
    moves: int
    wall_s: float
    median_cycle_s: float  # swipe to swipe, by the phone's clock
    recording: dict[str, Any] = field(default_factory=dict)
    run_dir: Path | None = None

    @property
    def per_move_ms(self) -> float:
        return 1000.0 * self.wall_s / max(1, self.moves)


@dataclass
class RecordBench:
    game: str
    moves: int
    size: tuple[int, int]
    plain: list[PlayTiming]
    recorded: list[PlayTiming]
    report_s: float | None = None
    report_mb: float | None = None
    view_lags: list[int] = field(default_factory=list)
    view_moves: int = 0

    @property
    def plain_ms(self) -> float:
        return statistics.median(t.per_move_ms for t in self.plain)

    @property
    def recorded_ms(self) -> float:
        return statistics.median(t.per_move_ms for t in self.recorded)

    @property
    def overhead(self) -> float:
        """Extra wall time per move with --record, as a share of the time without."""
        return self.recorded_ms / self.plain_ms - 1.0 if self.plain_ms else 0.0

    @property
    def recorder_cpu_ms(self) -> float:
        """The recorder's processor time per move (comparing, encoding, writing)."""
        return statistics.median(1000.0 * t.recording.get("cpu_s", 0.0) / max(1, t.moves) for t in self.recorded)

    @property
    def cycle_s(self) -> float:
        return statistics.median(t.median_cycle_s for t in self.plain + self.recorded)

    @property
    def recording_mb(self) -> float:
        return max(float(t.recording.get("mb", 0.0)) for t in self.recorded)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game, "moves": self.moves, "size": list(self.size),
            "per_move_ms": {"plain": round(self.plain_ms, 2), "record": round(self.recorded_ms, 2)},
            "record_overhead_of_wall_time": round(self.overhead, 4),
            "recorder_cpu_ms_per_move": round(self.recorder_cpu_ms, 2), "median_cycle_s": round(self.cycle_s, 3),
            "recorder_share_of_cycle": round(self.recorder_cpu_ms / 1000.0 / self.cycle_s, 4) if self.cycle_s else None,
            "recording_mb": round(self.recording_mb, 2),
            "frames": max(int(t.recording.get("frames", 0)) for t in self.recorded),
            "report_s": None if self.report_s is None else round(self.report_s, 2),
            "report_mb": None if self.report_mb is None else round(self.report_mb, 2),
            "view": {"moves": self.view_moves, "samples": len(self.view_lags),
                     "max_lag_captures": max(self.view_lags) if self.view_lags else None,
                     "mean_lag_captures": round(statistics.mean(self.view_lags), 3) if self.view_lags else None},
            "runs": [{"record": t.record, "per_move_ms": round(t.per_move_ms, 2), "wall_s": round(t.wall_s, 2)}
                     for t in self.plain + self.recorded],
        }  # fmt: skip


VIEW_MOVES = 20  # moves played with the live view on, in wall-clock time
VIEW_CAPTURE_MS = 100.0  # what each capture costs then (a real phone's take 300-800 ms)


def _play_once(game_name: str, seed: int, size: tuple[int, int], moves: int, root: Path, record: bool,
               watcher: Any = None) -> tuple[PlayTiming, PlaySummary]:  # fmt: skip
    game = get_game(game_name)
    # Watched, the phone animates in wall-clock time at a phone's pace (each capture
    # VIEW_CAPTURE_MS): in simulated time the loop captures every few milliseconds, and
    # a capture that costs nothing can follow the last within a millisecond, faster than
    # any page can be sent a frame.
    watched = watcher is not None
    run = sim_run(game, settings(game, {}, sim=True), seed, size, watched, root / "profiles",
                  latency_ms=VIEW_CAPTURE_MS if watched else 0.0)  # fmt: skip
    run_dir = new_run_dir(root / "runs")
    journal = run_dir / journal_name(run.device.serial)
    player = run.make_player()
    t0 = time.perf_counter()
    summary = play(run, PlayOptions(moves=moves), journal, summary_path=run_dir / "summary.json", player=player,
                   record=RecordOptions() if record else None, watcher=watcher)  # fmt: skip
    wall = time.perf_counter() - t0
    return PlayTiming(record, summary.moves, wall, summary.median_cycle_s, dict(summary.recording), run_dir), summary


def bench_record(game: str = "match3", moves: int = 200, seed: int = 0, size: tuple[int, int] = (1080, 2400),
                 repeats: int = 3, view: bool = True, report: bool = True,
                 progress: Callable[[str, int, int], None] | None = None) -> RecordBench:  # fmt: skip
    total = 2 * repeats + int(view) + int(report)
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(what, done, total)

    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        root = Path(tmp)
        plain: list[PlayTiming] = []
        recorded: list[PlayTiming] = []
        for i in range(repeats):
            # in turns, the first one of each pair alternating: a machine that slows
            # down during the bench slows both alike
            for record in ((False, True) if i % 2 == 0 else (True, False)):
                timing, _ = _play_once(game, seed, size, moves, root, record)
                (recorded if record else plain).append(timing)
                step("recorded run" if record else "plain run")
        bench = RecordBench(game, moves, size, plain, recorded)
        if report:
            from agent.report.html import write_report

            source = recorded[-1].run_dir
            assert source is not None
            t0 = time.perf_counter()
            out = write_report(source)
            bench.report_s = time.perf_counter() - t0
            bench.report_mb = out.stat().st_size / 1e6
            step("report")
        if view:
            # in wall-clock time a move takes the phone a second or so: a score of moves say it
            bench.view_lags, bench.view_moves = _view_lags(game, seed, size, min(moves, VIEW_MOVES), root)
            step("live view")
    return bench


def _view_lags(game: str, seed: int, size: tuple[int, int], moves: int, root: Path) -> tuple[list[int], int]:
    """Play with the live view on while a viewer fetches its frame over and over: each
    reply's capture number against the agent's count at that moment."""
    from agent.play.view import LiveView, frame_lag

    lags: list[int] = []
    stop = threading.Event()
    with LiveView() as live:
        url = live.start()

        def viewer() -> None:
            while not stop.is_set():
                lag = frame_lag(url, lambda: live.count)
                if lag is not None:
                    lags.append(lag)

        t = threading.Thread(target=viewer, name="viewer", daemon=True)
        t.start()
        try:
            timing, _ = _play_once(game, seed, size, moves, root, False, watcher=live)
        finally:
            stop.set()
            t.join(timeout=10)
    return lags, timing.moves
