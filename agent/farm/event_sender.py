"""A phone actor's events on their way to the driver, in batches, off the play loop.

Each call to the driver's inbox is a round trip across the cluster: on a studio's network
tens of milliseconds, several times a move if every journal line waited for its own. So
events are queued and a thread of their own sends them, in order, a batch a call; the
loop waits only where it must: a line that says the phone acted (the loop writes it
right after the swipe, the tap, the game's launch) or that the run ended is held by the
driver, with everything before it, before the loop goes on (while the phone animates).
An actor that dies then loses at most what its current move said after its gesture
(the board it saw next, its status), never a move the driver does not know was made;
the node keeps the whole journal in its own copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# Journal lines that say the phone acted, or that end a run: held by the driver before the loop goes on.
ACTING_LINES = frozenset({"decision", "dismissed", "launch", "stop"})
# How long an event that nobody waits for may wait for others to join its batch.
LINGER_S = 1.0
SEND_TIMEOUT_S = 30.0


def acting(line: dict) -> bool:
    """Whether this journal line says the phone acted (or the run ended)."""
    return line.get("type") in ACTING_LINES


@dataclass
class SenderStats:
    events: int = 0
    batches: int = 0
    waits: int = 0  # puts that waited for the driver to hold their event


class EventSender:
    """`.put(event, wait=False)` as `agent.farm.worker` wants a queue; `send(batch)` posts
    a batch to the driver and returns once it holds it (raising if it cannot). If it
    fails (the driver is gone), `stop` is set, so the run ends after its current move,
    and later events are dropped."""

    def __init__(self, send: Callable[[list[dict]], None], stop: threading.Event, linger_s: float = LINGER_S,
                 timeout_s: float = SEND_TIMEOUT_S) -> None:  # fmt: skip
        self._send, self._stop = send, stop
        self.linger_s, self.timeout_s = linger_s, timeout_s
        self._cond = threading.Condition()
        self._queue: list[dict] = []
        self._oldest = 0.0  # when the oldest queued event came
        self._queued = 0  # events ever queued
        self._sent = 0  # events the driver holds
        self._urgent = 0  # the highest count someone waits to see sent
        self._closed = False
        self.gone = False
        self.stats = SenderStats()
        self._thread = threading.Thread(target=self._run, name="events-to-driver", daemon=True)
        self._thread.start()

    def put(self, event: dict, wait: bool = False) -> None:
        with self._cond:
            if self.gone or self._closed:
                return
            if not self._queue:
                self._oldest = time.monotonic()
            self._queue.append(event)
            self._queued += 1
            mine = self._queued
            if wait:
                self._urgent = max(self._urgent, mine)
                self.stats.waits += 1
            self._cond.notify_all()
        if wait:
            self._wait_sent(mine)

    def flush(self) -> bool:
        """Wait until the driver holds every event put so far; False if it never will."""
        with self._cond:
            mine = self._urgent = self._queued
            self._cond.notify_all()
        return self._wait_sent(mine)

    def close(self) -> bool:
        """Flush, then end the thread; later events are dropped."""
        done = self.flush()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(self.timeout_s)
        return done

    def _wait_sent(self, count: int) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._sent >= count or self.gone, self.timeout_s)
            return self._sent >= count

    def _due(self) -> bool:
        if not self._queue:
            return self._closed
        return self._closed or self._urgent > self._sent or time.monotonic() - self._oldest >= self.linger_s

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due():
                    left = self.linger_s - (time.monotonic() - self._oldest) if self._queue else None
                    self._cond.wait(left)
                if not self._queue:
                    return  # closed, and nothing left
                batch, self._queue = self._queue, []
            try:
                self._send(batch)
            except Exception:
                with self._cond:
                    self.gone = True
                    self._queue.clear()
                    self._cond.notify_all()
                self._stop.set()
                return
            with self._cond:
                self._sent += len(batch)
                self.stats.events += len(batch)
                self.stats.batches += 1
                self._cond.notify_all()
