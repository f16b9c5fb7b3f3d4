"""`agent bench vision`: how long reading a frame with a profile and calibrating take.

Figures are medians of repeated runs in this process (first run excluded: imports and
caches); the screens are the simulated phone's, plus the real screenshots of the
project's shared folder when it is there.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agent.vision.calibrate import calibrate_frame

READ_TARGET_MS = 15.0
CALIBRATE_TARGET_S = 1.5


@dataclass(frozen=True)
class Figure:
    what: str
    screen: str
    runs: int
    median_ms: float
    p95_ms: float
    target_ms: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def ok(self) -> bool | None:
        return None if self.target_ms is None else self.median_ms <= self.target_ms


def _time(call: Callable[[], object], runs: int, tick: Callable[[], None] | None = None) -> np.ndarray:
    call()  # warm: imports, caches, first allocations
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        call()
        out.append(1000.0 * (time.perf_counter() - t))
        if tick:
            tick()
    return np.asarray(out)


def sim_frame(size: tuple[int, int], seed: int = 0) -> np.ndarray:
    from agent.device.clock import ManualClock
    from agent.games.match3.sim import SimPhone

    return SimPhone(seed=seed, size=size, clock=ManualClock()).screencap()


def realshots(shared: Path) -> list[tuple[str, np.ndarray]]:
    import json

    from agent.vision.images import read_image

    labels = shared / "realshots" / "labels.json"
    if not labels.exists():
        return []
    out = []
    for item in json.loads(labels.read_text()):
        out.append((f"{item['game']} {item['width']}x{item['height']}", read_image(shared / "realshots" / item["game"] / item["file"])))
    return out


def run(
    size: tuple[int, int] = (1080, 2400),
    read_runs: int = 200,
    calibrate_runs: int = 5,
    shared: Path | None = None,
    tick: Callable[[str], None] | None = None,
) -> list[Figure]:
    """The benchmark figures; `tick(label)` is called as work progresses."""
    note = tick or (lambda _label: None)
    screen = f"simulated {size[0]}x{size[1]}"
    frame = sim_frame(size)
    note("calibrating")
    cal = calibrate_frame(frame)
    profile = cal.profile
    figures = []
    note("reading")
    t = _time(lambda: profile.read(frame), read_runs)
    figures.append(Figure("read a frame with a profile", screen, read_runs, float(np.median(t)), float(np.percentile(t, 95)), READ_TARGET_MS))
    note("calibrating")
    t = _time(lambda: calibrate_frame(frame), calibrate_runs)
    figures.append(
        Figure("calibrate from scratch", screen, calibrate_runs, float(np.median(t)), float(np.percentile(t, 95)), 1000 * CALIBRATE_TARGET_S)
    )
    for name, img in realshots(shared) if shared else []:
        note(f"calibrating {name}")
        t = _time(partial(calibrate_frame, img), max(1, calibrate_runs // 2))
        figures.append(Figure("calibrate from scratch", name, len(t), float(np.median(t)), float(np.percentile(t, 95)), 1000 * CALIBRATE_TARGET_S))
    return figures
