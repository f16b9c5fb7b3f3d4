"""The actors of a farm on Ray (`agent farm --ray`): one `PhoneActor` per phone, placed on
the node the phone is attached to; one `Roster` per node, listing that node's phones; one
`Inbox` next to the driver, where every event of every phone goes.

Only events travel to the driver: journal lines, status lines and summaries, never
frames (a 1080x2400 frame is about 10 MB; a move's events are a few KB). A phone actor
talks to its own node's adb server, so the frames stay on the node.

This module imports Ray at the top: only the `--ray` path imports it (the local farm
runs with no Ray installed).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from agent.farm.event_sender import SEND_TIMEOUT_S, EventSender, acting
from agent.farm.profile_sync import changed_profiles, seed_profiles
from agent.farm.recording_sync import CHUNK_BYTES, Chunk, Cursor, next_chunk
from agent.farm.roster import roster_diff

# Every named actor of the farm lives in this namespace; a roster is named after its node.
NAMESPACE = "puzzle-agent-farm"
ROSTER_PREFIX = "roster:"
LIST_EVERY_S = 2.0
# Restarts of a phone actor whose process died (a restarted actor runs its constructor
# again, then the driver asks it to play the moves left).
ACTOR_MAX_RESTARTS = 2
# Ray starts its workers at a low priority (nice 15), right for batch work. A phone actor
# keeps pace with its phone (it reads the board as the animations end), like the local
# farm's workers at normal priority beside the emulators of the same host; Ray's own job
# supervisor opts out the same way, per process.
PHONE_ACTOR_RUNTIME_ENV = {"env_vars": {"RAY_worker_niceness": "0"}}


# Ray's stubs type `ray.remote` for functions and a few options; an actor class with
# max_concurrency fits none of its overloads.
_remote: Any = ray.remote  # applied to classes: mypy keeps their own type, so `.options` is ignored where used


def roster_name(node_id: str) -> str:
    return ROSTER_PREFIX + node_id


def pinned(node_id: str) -> NodeAffinitySchedulingStrategy:
    """Run on that node and nowhere else: a phone is reachable only from its own node's
    adb server (soft=False: if the node is gone, the actor is not moved elsewhere)."""
    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def here() -> dict[str, Any]:
    ctx = ray.get_runtime_context()
    return {"node_id": ctx.get_node_id(), "pid": os.getpid(), "reconstructed": ctx.was_current_actor_reconstructed}


@_remote(num_cpus=0)
class Inbox:
    """The driver's mailbox: phone actors put their events in batches (a call each,
    waited for: a batch is at the driver's node once `put` returns, even if the phone
    actor dies next); the driver takes them all at once."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def put(self, events: list[dict]) -> None:
        self.events.extend(events)

    def take(self) -> list[dict]:
        out, self.events = self.events, []
        return out


def inbox_sender(inbox: Any, stop: threading.Event) -> EventSender:
    """A worker's event queue (`.put(dict)`, as `agent.farm.worker` wants) that posts to
    the inbox in batches. If the inbox is gone (the driver died), the run is asked to stop."""
    return EventSender(lambda batch: ray.get(inbox.put.remote(batch), timeout=SEND_TIMEOUT_S), stop)


@_remote(num_cpus=0, max_concurrency=4)
class PhoneActor:
    """Plays one phone, on its node. Threaded (`max_concurrency`) so `stop` and `info`
    answer while `play` runs. Created with max_restarts and max_task_retries=0: a dead
    process is restarted by Ray, but a `play` it was running is not replayed (its gesture
    could be made twice); the driver calls `play` again for the moves left."""

    def __init__(self, key: str, inbox: str) -> None:
        self.key = key
        self.inbox = ray.get_actor(inbox, namespace=NAMESPACE)  # the driver's (see RayFarm)
        self._stop = threading.Event()  # a farm's stop is final: never cleared

    def info(self) -> dict[str, Any]:
        return {"key": self.key, **here()}

    def play(self, spec_json: str, profiles: dict[str, bytes] | None = None) -> dict[str, Any]:
        """Play the spec's phone. `profiles`: the driver's, for the node's own folder (the
        spec's `profiles`); the reply hands back those the run changed (learned, calibrated)."""
        from agent.farm.worker import WorkerSpec, worker_main
        from agent.play.journal import end_unfinished

        spec = WorkerSpec.from_json(spec_json)
        out = inbox_sender(self.inbox, self._stop)
        me = here()
        try:
            out.put({"kind": "actor", "key": self.key, "t": time.time(), **me})
            # The node's own copy of the journal: a run of ours that died gets its stop line.
            end_unfinished(Path(spec.journal), "the phone's actor died (its process was restarted) before its stop line",
                           "crashed", written_by="actor")  # fmt: skip
            if profiles is not None:
                seed_profiles(Path(spec.profiles), profiles)

            def tee(line: dict) -> None:
                out.put({"kind": "journal", "key": self.key, "line": line}, wait=acting(line))

            if not self._stop.is_set():
                worker_main(spec, out, self._stop, journal_tee=tee)
        except OSError as exc:  # this node's disk: the run cannot even start
            out.put({"kind": "error", "key": self.key, "t": time.time(), "error_class": "AgentError", "retry": True,
                     "error": f"cannot keep the run's files on node {me['node_id'][:12]}: {exc}",
                     "hint": "free space on that node's temporary folder, or take it out of the cluster"})  # fmt: skip
        finally:
            out.close()  # everything said is at the driver before `play` returns
        reply: dict[str, Any] = {**me, "events": out.stats.events, "batches": out.stats.batches}
        if profiles is not None:
            reply["profiles"] = changed_profiles(Path(spec.profiles), profiles)
        return reply

    def stop(self) -> None:
        """Stop after the current move (the loop checks between moves)."""
        self._stop.set()

    def recording(self, journal: str, cursor: dict[str, Any], most_bytes: int = CHUNK_BYTES) -> Chunk:
        """The next part of the recording kept beside this node's copy of `journal` that
        the driver's copy (`cursor`) lacks; answered while `play` runs, and by a
        restarted actor for the frames of the run its process lost."""
        from agent.play.recording import frames_dir

        return next_chunk(frames_dir(Path(journal)), Cursor.from_json(cursor), most_bytes)


@_remote(num_cpus=0, max_concurrency=2)
class Roster:
    """A node's phones: lists the node's adb server every `every_s` seconds, keeping up as
    phones come and go. Detached and named after its node, so the driver of any later
    farm finds it. (Ray node resources are fixed when the raylet starts, so a node cannot
    advertise phones that come and go as resources: the roster is the equivalent.)"""

    def __init__(self, node_id: str, host: str, port: int, every_s: float = LIST_EVERY_S) -> None:
        self.node_id, self.host, self.port, self.every_s = node_id, host, port, every_s
        self._lock = threading.Lock()
        self._devices: list[dict[str, Any]] = []
        self._error = ""
        self._listed_at = 0.0
        self._first = threading.Event()
        self._changes: list[dict[str, Any]] = []
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        from agent.device.adb import AdbTarget, list_devices

        target = AdbTarget(self.host, self.port)
        while True:
            try:
                found = [{"serial": d.serial, "state": d.state, "model": d.model} for d in list_devices(target, 5.0)]
                error = ""
            except Exception as exc:  # an adb server that is down now may be up later
                found, error = [], f"{type(exc).__name__}: {exc}"
            with self._lock:
                joined, left = roster_diff(self._devices, found)
                now = time.time()
                self._changes.extend([{"t": now, "joined": d["serial"]} for d in joined] +
                                     [{"t": now, "left": d["serial"]} for d in left])  # fmt: skip
                del self._changes[:-100]
                self._devices, self._error, self._listed_at = found, error, now
            self._first.set()
            time.sleep(self.every_s)

    def devices(self) -> dict[str, Any]:
        self._first.wait(10.0)  # the first listing, so a farm that just started sees the phones
        with self._lock:
            return {"node_id": self.node_id, "adb": f"{self.host}:{self.port}", "devices": list(self._devices),
                    "error": self._error, "listed_at": self._listed_at, "changes": list(self._changes[-10:]),
                    **here()}  # fmt: skip


def start_roster(node_id: str, adb: Any, every_s: float = LIST_EVERY_S) -> Any:
    """What `agent farm-node` does on its node once joined: a detached roster actor named
    after the node, pinned to it, listing `adb` (an AdbTarget: the node's own adb server).
    A roster already there is replaced (its adb server may have changed)."""
    name = roster_name(node_id)
    try:
        old = ray.get_actor(name, namespace=NAMESPACE)
    except ValueError:
        old = None
    if old is not None:
        ray.kill(old, no_restart=True)
        _wait_name_free(name)
    roster = Roster.options(  # type: ignore[attr-defined]
        name=name, namespace=NAMESPACE, lifetime="detached", scheduling_strategy=pinned(node_id),
        max_restarts=-1, max_task_retries=-1,  # listing is harmless to repeat
    ).remote(node_id, adb.host, adb.port, every_s)
    ray.get(roster.devices.remote(), timeout=120)  # up and listing
    return roster


def _wait_name_free(name: str, timeout_s: float = 30.0) -> None:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        try:
            ray.get_actor(name, namespace=NAMESPACE)
        except ValueError:
            return
        time.sleep(0.2)


def rosters() -> dict[str, Any]:
    """Every node's roster: {node_id: actor handle}."""
    out = {}
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if isinstance(entry, dict) and entry.get("namespace") == NAMESPACE and entry["name"].startswith(ROSTER_PREFIX):
            try:
                out[entry["name"][len(ROSTER_PREFIX):]] = ray.get_actor(entry["name"], namespace=NAMESPACE)
            except ValueError:
                continue  # gone meanwhile
    return out
