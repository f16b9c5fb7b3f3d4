"""A phone actor's events go to the driver in order, in batches, off the play loop; the
loop waits only after a line that says the phone acted."""

from __future__ import annotations

import threading
import time

import pytest

from agent.farm.event_sender import ACTING_LINES, EventSender, acting


class _Driver:
    """An inbox that takes `delay_s` to answer each call, and records what it holds."""

    def __init__(self, delay_s: float = 0.0, fail_after: int | None = None) -> None:
        self.delay_s, self.fail_after = delay_s, fail_after
        self.held: list[dict] = []
        self.calls = 0
        self.lock = threading.Lock()

    def send(self, batch: list[dict]) -> None:
        time.sleep(self.delay_s)
        with self.lock:
            self.calls += 1
            if self.fail_after is not None and self.calls > self.fail_after:
                raise ConnectionError("the driver is gone")
            self.held.extend(batch)

    def holds(self, event: dict) -> bool:
        with self.lock:
            return event in self.held


def _line(kind: str, i: int) -> dict:
    return {"kind": "journal", "line": {"type": kind, "i": i}}


def test_events_reach_the_driver_in_order_in_fewer_calls_than_events():
    driver = _Driver(delay_s=0.01)
    sender = EventSender(driver.send, threading.Event(), linger_s=0.05)
    events = [{"i": i} for i in range(200)]
    for e in events:
        sender.put(e)
    assert sender.close()
    assert driver.held == events
    assert driver.calls < 20  # batched, not one call an event
    assert sender.stats.events == 200 and sender.stats.batches == driver.calls


def test_a_put_nobody_waits_for_does_not_wait_for_the_driver():
    driver = _Driver(delay_s=0.3)
    sender = EventSender(driver.send, threading.Event(), linger_s=0.0)
    t0 = time.monotonic()
    for i in range(5):
        sender.put({"i": i})
    assert time.monotonic() - t0 < 0.2  # five round trips of 0.3 s would take 1.5 s
    assert sender.close()
    assert [e["i"] for e in driver.held] == list(range(5))


def test_an_acting_line_is_at_the_driver_with_all_before_it_when_put_returns():
    driver = _Driver(delay_s=0.02)
    sender = EventSender(driver.send, threading.Event(), linger_s=10.0)  # nothing would go on its own
    before = [_line("moving", 1), {"kind": "status", "moves": 1}, _line("check", 1)]
    for e in before:
        sender.put(e)
    decision = _line("decision", 2)
    sender.put(decision, wait=True)
    assert all(driver.holds(e) for e in before + [decision])
    later = _line("moving", 2)
    sender.put(later)
    assert not driver.holds(later)  # it lingers: nobody waits for it
    assert sender.close() and driver.holds(later)


def test_events_that_linger_go_on_their_own():
    driver = _Driver()
    sender = EventSender(driver.send, threading.Event(), linger_s=0.05)
    e = {"kind": "status"}
    sender.put(e)
    deadline = time.monotonic() + 5
    while not driver.holds(e) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert driver.holds(e)
    sender.close()


def test_a_driver_that_is_gone_stops_the_run_and_later_events_are_dropped():
    driver = _Driver(fail_after=1)
    stop = threading.Event()
    sender = EventSender(driver.send, stop, linger_s=0.0, timeout_s=5)
    sender.put({"i": 0}, wait=True)
    assert not stop.is_set()
    sender.put({"i": 1}, wait=True)  # its call fails: the put returns, the run is asked to stop
    assert stop.is_set() and sender.gone
    sender.put({"i": 2})
    assert not sender.close()  # never held: close says so rather than hang
    assert driver.held == [{"i": 0}]


@pytest.mark.parametrize("kind", sorted(ACTING_LINES))
def test_the_lines_that_say_the_phone_acted_are_waited_for(kind):
    assert acting({"type": kind})


@pytest.mark.parametrize("kind", ["moving", "check", "unreadable", "screen", "note", "start"])
def test_observations_are_not_waited_for(kind):
    assert not acting({"type": kind})


def test_many_threads_putting_keep_each_ones_order():
    driver = _Driver(delay_s=0.001)
    sender = EventSender(driver.send, threading.Event(), linger_s=0.01)

    def put(who: int) -> None:
        for i in range(50):
            sender.put({"who": who, "i": i}, wait=i % 10 == 0)

    threads = [threading.Thread(target=put, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sender.close()
    for w in range(4):
        assert [e["i"] for e in driver.held if e["who"] == w] == list(range(50))
