"""Two screenshots in flight on a slow phone, half a capture apart.

A phone's screencap that takes 300 ms shows the screen as it was when it began, and a
board at rest is told by two frames that agree: with one capture at a time the loop
learns that a move is over two to three captures after it ended. Most of a slow
capture is the phone encoding and the bytes travelling, not the screen being read, so a
second capture started half-way through the first shows the screen half a capture
later at little extra cost. Frames are handed out in the order they began, so a frame
never shows an older screen than the one before it.

Only for a device whose calls may overlap (`concurrent_captures`: adb opens a
connection per call) and a real clock; a phone that serialises its screenshots shows it
as each capture taking about twice as long, and the pipeline stops.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from agent.device.clock import Clock

# A capture this slow is worth overlapping; a faster one is its own good poll.
PIPELINE_FROM_S = 0.12
# Overlapped captures each taking this much longer than one alone: the phone serialises them.
SERIALISED = 1.6
JUDGE_OVER = 5  # overlapped captures the median of which is judged

Shot = tuple[float, np.ndarray, float]  # (clock time it began, the frame, what it took)


class CapturePipeline:
    def __init__(self, capture: Callable[[], np.ndarray], clock: Clock, alone_s: float) -> None:
        self._capture, self._clock = capture, clock
        self.alone_s = alone_s  # what one capture took with nothing else in flight
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="capture")
        self._queue: deque[tuple[float, Future[Shot]]] = deque()  # (when it may begin, its shot)
        self._took: deque[float] = deque(maxlen=JUDGE_OVER)
        self.serialised = False

    def _shot(self, not_before: float) -> Shot:
        wait = not_before - self._clock.now()
        if wait > 0:
            time.sleep(wait)
        t0 = self._clock.now()
        frame = self._capture()
        return t0, frame, max(0.0, self._clock.now() - t0)

    def _submit(self, not_before: float) -> None:
        self._queue.append((not_before, self._pool.submit(self._shot, not_before)))

    def next(self) -> Shot:
        """The next frame by the time it began; the one after it is already on its way."""
        now = self._clock.now()
        if not self._queue:
            self._submit(now)
        begins, future = self._queue.popleft()
        self._submit(max(now, begins + self.alone_s / 2))
        shot = future.result()
        self._took.append(shot[2])
        # judged on several: one slow frame (a busy moment) says nothing
        if len(self._took) == JUDGE_OVER and statistics.median(self._took) > SERIALISED * self.alone_s:
            self.serialised = True
        return shot

    def close(self) -> None:
        for _, future in self._queue:
            future.cancel()
        self._queue.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)
