"""A farm across machines on Ray (`agent farm --ray ADDRESS`): the driver side.

Each phone is played by one Ray actor (`agent.farm.ray_actor.PhoneActor`) placed on the
node the phone is attached to, talking to that node's own adb server, so frames never
leave the node. Nodes advertise their phones through a roster actor each
(`agent farm-node`); the driver asks every roster for its phones (a device is keyed by
node and serial). Only events reach the driver, through one inbox actor on the driver's
node: journal lines (the driver writes each device's journal from them; the actor keeps
a node-local copy too), status lines and summaries, the same the local farm's workers
send. Their JSON size is counted: `bytes_to_driver` and `bytes_per_move` in the totals.

Faults: a phone that fails is retried with backoff and quarantined as on the local farm
(`Farm._fail`); an actor whose process dies is restarted by Ray (max_restarts) and, its
`play` never retried by Ray (max_task_retries=0: a gesture is never made twice), the
driver asks it to play the moves left, after giving the dead run's journal its stop
line; a node that leaves the cluster takes its phones out of play (state `node_left`,
the node named in last_error).

Ray is imported only inside functions (and by `agent.farm.ray_actor`), so importing this
module costs nothing without Ray, and the CLI can say how to install it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from agent.errors import AgentError, UsageError
from agent.farm.controller import TERMINAL, DeviceRow, Farm
from agent.farm.controller import FarmOptions
from agent.farm.profile_sync import keep_profiles, profile_files
from agent.farm.recording_sync import Cursor, apply_chunk
from agent.farm.worker import WorkerSpec
from agent.play.recording import frames_dir
from agent.play.journal import end_unfinished, journal_name

NODE_LEFT = "node_left"  # the phone's node left the cluster: terminal
RAY_TERMINAL = TERMINAL | {NODE_LEFT}
INSTALL_HINT = 'install the extra: pip install ".[ray]"'
NODES_EVERY_S = 1.0  # how often the driver asks which nodes are alive
RECORDING_EVERY_S = 2.0  # how often a recording's new frames are asked for while its phone plays
RECORDING_TIMEOUT_S = 120.0
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def import_ray() -> Any:
    """Ray, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise AgentError("--ray needs Ray, which is not installed", hint=INSTALL_HINT) from None
    return ray


def check_address(address: str, timeout_s: float = 3.0, option: str = "--ray") -> None:
    """A cluster address must answer before Ray is asked to connect (Ray itself retries
    for a long while, then says little). One that is no HOST:PORT is a usage error of
    `option` (exit 2)."""
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(option, f"{option} {address!r} is not an address",
                         hint="give the head node's HOST:PORT (e.g. 10.0.0.5:6379), or `auto` to join the cluster started on this machine")  # fmt: skip
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise AgentError(
            f"no Ray cluster answers at {address}: {exc}",
            hint="start its head (`ray start --head --node-ip-address IP`) and give its HOST:PORT, "
                 "or `--ray auto` to join the one started on this machine",
        ) from None  # fmt: skip


def keep_loopback() -> None:
    """Ray turns 127.0.0.1 into this host's network address when a process connects (the
    cluster address and the driver's own), so a cluster bound to 127.0.0.1 (tests, a
    farm on one machine) cannot be joined: tell Ray this host has no cluster network, the
    setting it uses on single-machine platforms (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0),
    read at import, hence set here."""
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def connect(address: str, node_ip_address: str | None = None) -> bool:
    """Connect this process to the cluster as its driver; True when this call did (so the
    caller disconnects), False when it was connected already."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    check_address(address)
    from agent.farm.ray_actor import NAMESPACE

    host = address.rpartition(":")[0]
    if host in LOCAL_HOSTS or node_ip_address in LOCAL_HOSTS:
        keep_loopback()
        node_ip_address = node_ip_address or "127.0.0.1"
    kwargs: dict[str, Any] = {"_node_ip_address": node_ip_address} if node_ip_address else {}
    try:
        with keep_signal_handlers():
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level="warning", **kwargs)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        raise AgentError(f"cannot join the Ray cluster at {address}: {exc}",
                         hint="check the address (`ray status` on the head node) and that this machine is one of its nodes, or start one here: `ray start --address ADDRESS`") from None  # fmt: skip
    return True


@contextmanager
def keep_signal_handlers() -> Iterator[None]:
    """Ray puts its own SIGTERM handler in when this process joins a cluster or starts a
    node (it exits at once): the farm's own stop (journals ended, summary written, the
    cluster let go) must stay in charge."""
    main = threading.current_thread() is threading.main_thread()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)} if main else {}
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            if handler is not None:
                signal.signal(signum, handler)


def device_key(node_id: str, serial: str) -> str:
    """A device of a Ray farm: its node and its serial (the same serial on two nodes is
    two phones). The node's first 12 hex digits name it well enough and keep names short."""
    return f"{node_id[:12]}/{serial}"


def event_bytes(event: dict) -> int:
    """What one event costs on the wire to the driver: its compact JSON."""
    return len(json.dumps(event, separators=(",", ":")))


@dataclass
class EventMeter:
    """The bytes of every event the driver received, in all and per device."""

    total: int = 0
    events: int = 0

    def __post_init__(self) -> None:
        self.by_key: dict[str, int] = {}

    def count(self, event: dict) -> int:
        n = event_bytes(event)
        self.total += n
        self.events += 1
        key = str(event.get("key") or "")
        self.by_key[key] = self.by_key.get(key, 0) + n
        return n

    def per_move(self, moves: int) -> float | None:
        return round(self.total / moves, 1) if moves else None


def nodes_left(rows: list[DeviceRow], alive: dict[str, str], terminal: set[str] = RAY_TERMINAL) -> list[DeviceRow]:
    """The rows still in play whose node is no longer alive."""
    return [r for r in rows if r.node and r.node not in alive and r.state not in terminal]


@dataclass
class _ActorRun:
    """One `play` call in flight on a phone's actor."""

    actor: Any
    ref: Any
    started: float


class RayFarm(Farm):
    """The local farm's table, retries, quarantine and summary (`Farm`), with each phone
    played by an actor on its node instead of a worker process here."""

    terminal_states = frozenset(RAY_TERMINAL)

    def __init__(
        self, address: str | None, run_dir: Path, options: FarmOptions = FarmOptions(),
        node_dir: Path | str | None = None, actor_cpus: float = 0.0, node_ip_address: str | None = None,
        nodes_fn: Callable[[], dict[str, str]] | None = None,
    ) -> None:  # fmt: skip
        """`address`: the cluster (HOST:PORT or "auto"; None: this process is connected
        already). `node_dir`: where each node keeps its own copy of the journals
        (default: the system's temporary folder, on each node). `actor_cpus`: the CPUs
        each phone actor claims (0: as many phones per node as are attached)."""
        super().__init__([], run_dir, options, list_fn=lambda target: [])
        self.ray = import_ray()
        self.address = address
        self._connected_here = connect(address, node_ip_address) if address is not None else False
        self.started = time.time()  # the run's clock starts once connected, as a local farm's does
        from agent.farm.ray_actor import NAMESPACE, Inbox, pinned

        self.driver_node = self.ray.get_runtime_context().get_node_id()
        # The inbox on the driver's node: events cross the network once, to here.
        # Named, so the phone actors get its name (a string, kept with the actor for its
        # restarts), not a handle in the object store that a restart could find gone.
        import uuid

        self.inbox_name = f"inbox:{uuid.uuid4().hex}"
        self.inbox = Inbox.options(  # type: ignore[attr-defined]
            name=self.inbox_name, namespace=NAMESPACE, scheduling_strategy=pinned(self.driver_node),
        ).remote()
        self.ray.get(self.inbox.take.remote(), timeout=120)  # up
        self.actor_cpus = actor_cpus
        import tempfile

        self.node_dir = str(node_dir) if node_dir is not None else str(Path(tempfile.gettempdir()) / "puzzle-agent-ray")
        self._nodes_fn = nodes_fn or self._ray_nodes
        self._driver_state()

    def _driver_state(self) -> None:
        """What the driver keeps of the phones' runs (no Ray call: tests build a driver
        without a cluster from this)."""
        self.meter = EventMeter()
        self.actors: dict[str, Any] = {}  # key -> PhoneActor handle (kept across its runs)
        self.actor_info: dict[str, dict[str, Any]] = {}  # key -> what its actor said of itself (node, pid)
        self.alive: dict[str, str] = {}  # node id -> its address, as of the last look
        self._last_nodes = -1e9
        self._journals: dict[str, IO[str]] = {}
        self._run_decisions: dict[str, int] = {}  # decision lines of the device's current run
        self._run_lines: dict[str, int] = {}  # journal lines of the device's current run (0: it never began)
        self.rosters_seen: dict[str, dict[str, Any]] = {}  # node id -> its roster's last reply
        self.calls_to_driver = 0  # the inbox calls the phones' actors made (a batch of events each), of runs that ended
        # Recordings, copied from the nodes as they grow (--record) and when a run ends.
        self._recordings: dict[str, Cursor] = {}  # key -> what the driver's copy holds
        self._recording_calls: dict[str, Any] = {}  # key -> a call in flight
        self._last_recording_sync = 0.0
        self.recording_bytes = 0

    # -- nodes and their phones ------------------------------------------------------------
    def _ray_nodes(self) -> dict[str, str]:
        return {n["NodeID"]: n.get("NodeManagerAddress", "?") for n in self.ray.nodes() if n.get("Alive")}

    def _check_nodes(self) -> None:
        self._last_nodes = time.monotonic()
        try:
            alive = self._nodes_fn()
        except Exception as exc:  # the head is unreachable for a moment: look again later
            self._event("cluster_error", error=str(exc))
            return
        for row in nodes_left(list(self.rows.values()), alive):
            self._node_left(row, self.alive.get(row.node, "?"))
        self.alive = alive

    def _node_left(self, row: DeviceRow, where: str) -> None:
        run = row.process
        row.process = None
        if run is not None:
            self._drain()
            self._count_made(row)
            self._end_journal(row, f"its node {row.node[:12]} ({where}) left the cluster", NODE_LEFT)
        row.state = NODE_LEFT
        row.last_error = f"node {row.node[:12]} ({where}) left the cluster"
        self._event("node_left", key=row.key, node=row.node, address=where)

    def discover(self) -> None:
        """Ask every live node's roster for its phones; new ones join the farm."""
        from agent.farm.ray_actor import rosters

        self._last_discovery = time.monotonic()
        if time.monotonic() - self._last_nodes >= NODES_EVERY_S:
            self._check_nodes()
        found = {node: r for node, r in rosters().items() if node in self.alive}
        refs = {node: r.devices.remote() for node, r in found.items()}
        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=10.0) if refs else ([], [])
        for node, ref in refs.items():
            if ref not in ready:
                self._event("roster_error", node=node, error="no answer within 10 s")
                continue
            try:
                reply = self.ray.get(ref)
            except Exception as exc:  # a roster on a node going down
                self._event("roster_error", node=node, error=str(exc))
                continue
            self.meter.count({"kind": "roster", **reply})
            self.rosters_seen[node] = reply
            if reply.get("error"):
                self._event("adb_server_error", node=node, adb=reply["adb"], error=reply["error"])
            host, _, port = reply["adb"].rpartition(":")
            for dev in reply["devices"]:
                if self.options.serials and dev["serial"] not in self.options.serials:
                    continue
                key = device_key(node, dev["serial"])
                if key in self.rows:
                    continue
                row = self.rows[key] = DeviceRow(key, host, int(port), dev["serial"], model=dev.get("model") or "-",
                                                 node=node)  # fmt: skip
                self._event("joined", key=key, state=dev["state"], node=node)
                if dev["state"] != "device":
                    row.state = "waiting"
                    row.last_error = f"adb says {dev['state']}"

    # -- the phones' actors ------------------------------------------------------------------
    def _actor(self, row: DeviceRow) -> Any:
        actor = self.actors.get(row.key)
        if actor is None:
            from agent.farm.ray_actor import ACTOR_MAX_RESTARTS, PHONE_ACTOR_RUNTIME_ENV, PhoneActor, pinned

            actor = self.actors[row.key] = PhoneActor.options(  # type: ignore[attr-defined]
                scheduling_strategy=pinned(row.node), max_restarts=ACTOR_MAX_RESTARTS, max_task_retries=0,
                num_cpus=self.actor_cpus, runtime_env=PHONE_ACTOR_RUNTIME_ENV,
            ).remote(row.key, self.inbox_name)
        return actor

    def _node_journal(self, row: DeviceRow) -> Path:
        """The node's own copy of the device's journal (on the node's disk, not here)."""
        return Path(self.node_dir) / self.run_dir.name / journal_name(row.key)

    def _start(self, row: DeviceRow) -> None:
        remaining = None if self.options.moves is None else self.options.moves - row.moves
        local = self._node_journal(row)
        # The driver's profiles travel with the run: a node needs no copy at the driver's path.
        profiles, left_out = profile_files(Path(self.options.profiles))
        if left_out:
            self._event("profiles_left_out", key=row.key, files=left_out)
        spec = WorkerSpec(
            key=row.key, host=row.host, port=row.port, serial=row.serial, game=self.options.game,
            settings=dict(self.options.settings), seed=self.options.seed, moves=remaining, journal=str(local),
            profiles=str(local.parent / "profiles"), calibrate=self.options.calibrate, launch=self.options.launch,
            record=self.options.record, view=self.options.view, levels=self.options.levels,
        )  # fmt: skip
        self.run_dir.mkdir(parents=True, exist_ok=True)
        actor = self._actor(row)
        row.process = _ActorRun(actor, actor.play.remote(spec.to_json(), profiles), time.monotonic())
        self._run_decisions[row.key] = 0
        self._run_lines[row.key] = 0
        row.runs += 1
        row.state = "starting" if row.runs == 1 else "rejoining"

    # -- events -------------------------------------------------------------------------------
    def _drain(self) -> None:
        try:
            events = self.ray.get(self.inbox.take.remote(), timeout=30)
        except Exception as exc:
            self._event("inbox_error", error=str(exc))
            return
        for event in events:
            self.meter.count(event)
            self._handle(event)

    def _handle(self, msg: dict) -> None:
        kind = msg.get("kind")
        key = msg.get("key") or ""
        if kind == "journal":
            if key in self.rows:
                self._journal_line(key, msg["line"])
        elif kind == "actor":
            self.actor_info[key] = {k: msg[k] for k in ("node_id", "pid", "reconstructed")}
            self._event("actor", key=key, node=msg["node_id"], pid=msg["pid"], reconstructed=msg["reconstructed"])
        else:
            super()._handle(msg)

    def _journal_line(self, key: str, line: dict) -> None:
        """The driver's copy of a device's journal, line by line as the actor wrote it."""
        f = self._journals.get(key)
        if f is None:
            f = self._journals[key] = open(self.run_dir / journal_name(key), "a", encoding="utf-8")
        f.write(json.dumps(line, separators=(",", ":")) + "\n")
        f.flush()
        self._run_lines[key] = self._run_lines.get(key, 0) + 1
        if line.get("type") == "decision":
            self._run_decisions[key] = self._run_decisions.get(key, 0) + 1

    def _count_made(self, row: DeviceRow) -> None:
        """A run that died: its moves are the decisions its journal holds (its last status
        line may not have come)."""
        row.moves = max(row.moves, row.base_moves + self._run_decisions.get(row.key, 0))

    def _end_journal(self, row: DeviceRow, why: str, kind: str) -> None:
        f = self._journals.pop(row.key, None)
        if f is not None:
            f.close()
        try:
            end_unfinished(self.run_dir / journal_name(row.key), why, kind, written_by="farm")
        except OSError as exc:
            self._event("journal_error", key=row.key, error=str(exc))

    def _keep_profiles(self, row: DeviceRow, files: dict[str, bytes]) -> None:
        """What a run learned or calibrated, in the driver's profiles, as a local worker keeps it."""
        try:
            written = keep_profiles(Path(self.options.profiles), files)
        except OSError as exc:
            self._event("profile_error", key=row.key, error=f"cannot keep the run's profiles: {exc}")
            return
        if written:
            self._event("profiles_kept", key=row.key, files=written)

    # -- recordings -----------------------------------------------------------------------------
    def _ask_recording(self, row: DeviceRow) -> Any:
        cursor = self._recordings.setdefault(row.key, Cursor())
        return self._actor(row).recording.remote(str(self._node_journal(row)), cursor.as_json())

    def _take_recording(self, row: DeviceRow, ref: Any, timeout_s: float | None = None) -> bool:
        """Put a chunk the node sent in the driver's copy; True if more is left."""
        try:
            chunk = self.ray.get(ref, timeout=timeout_s)
            folder = frames_dir(self.run_dir / journal_name(row.key))
            self._recordings[row.key] = apply_chunk(folder, chunk, self._recordings[row.key])
        except Exception as exc:  # an actor gone for good, a node that left, a disk full here
            self._event("recording_error", key=row.key, error=_first_line(exc))
            return False
        self.recording_bytes += chunk.size
        return chunk.more

    def _sync_recordings(self) -> None:
        """While the phones play: ask each for what its recording gained, a call at a time."""
        for key, ref in list(self._recording_calls.items()):
            if self.ray.wait([ref], timeout=0)[0]:
                del self._recording_calls[key]
                if self._take_recording(self.rows[key], ref):
                    self._recording_calls[key] = self._ask_recording(self.rows[key])
        if time.monotonic() - self._last_recording_sync < RECORDING_EVERY_S:
            return
        self._last_recording_sync = time.monotonic()
        for row in self.rows.values():
            if row.process is not None and row.key not in self._recording_calls:
                self._recording_calls[row.key] = self._ask_recording(row)

    def _finish_recording(self, row: DeviceRow) -> None:
        """A run ended: the rest of its recording (or the frames of its stop), all of it."""
        pending = self._recording_calls.pop(row.key, None)
        if pending is not None:
            self._take_recording(row, pending, RECORDING_TIMEOUT_S)  # then whatever is left, below
        more = True
        while more:
            more = self._take_recording(row, self._ask_recording(row), RECORDING_TIMEOUT_S)

    # -- the farm's tick ----------------------------------------------------------------------
    def _tick(self) -> None:
        self._drain()
        if self.options.record is not None:
            self._sync_recordings()
        now = time.monotonic()
        if now - self._last_nodes >= NODES_EVERY_S:
            self._check_nodes()
        runs = {key: row.process for key, row in self.rows.items() if row.process is not None}
        ready = set()
        if runs:
            refs = [r.ref for r in runs.values()]
            ready = set(self.ray.wait(refs, num_returns=len(refs), timeout=0)[0])
        for key, run in runs.items():
            if run.ref in ready:
                self._ended(self.rows[key], run)
        now = time.monotonic()
        for row in self.rows.values():
            if row.process is not None or self._stop.is_set():
                continue
            if row.state == "starting" or (row.state == "retrying" and now >= row.retry_at):
                self._start(row)
        if now - self._last_discovery >= self.options.discover_every_s and not self._stop.is_set():
            self.discover()
            for row in self.rows.values():
                if row.state == "waiting":
                    row.state = "starting"  # try it: the actor reports what is wrong

    def _ended(self, row: DeviceRow, run: _ActorRun) -> None:
        """A `play` call returned, or its actor's process died under it."""
        row.process = None
        died: BaseException | None = None
        try:
            said = self.ray.get(run.ref)
        except Exception as exc:  # RayActorError and kin: the process died mid-call
            died = exc
        else:
            if isinstance(said, dict):
                self.calls_to_driver += int(said.get("batches", 0))
                self._keep_profiles(row, said.get("profiles") or {})
        self._drain()  # its last words, if it said them
        if row.node in self._nodes_fn():
            self._finish_recording(row)
        if row.state in RAY_TERMINAL or row.state == "retrying":
            return
        # Ended without a word: its process died (or it was stopped with the farm).
        self._count_made(row)
        if died is not None:
            self._end_journal(row, "the phone's actor died before its stop line", "crashed")
            self._event("actor_died", key=row.key, error=_first_line(died))
            if not self._run_lines.get(row.key):
                # (a call made while Ray still restarted the actor's process: the run never
                # reached the phone, its journal has no start line of it)
                self._event("run_not_started", key=row.key, error=_first_line(died))
            row.last_error = f"its actor died: {_first_line(died)}"
        else:
            self._end_journal(row, "the phone's actor returned before its stop line", "crashed")
        if row.node and row.node not in self._nodes_fn():
            self._node_left(row, self.alive.get(row.node, "?"))
        elif not self._stop.is_set():
            self._fail(row)  # Ray restarts the process; the retry plays the moves left

    # -- stopping ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask every phone's actor to stop after its current move."""
        self._stop.set()
        for row in self.rows.values():
            if row.process is not None:
                row.process.actor.stop.remote()

    def _end_worker(self, row: DeviceRow) -> None:
        # An actor cannot be asked to stop at once: it is ended (its journal gets its stop line here).
        self.ray.kill(row.process.actor, no_restart=True)

    def _abandon_worker(self, row: DeviceRow) -> None:
        row.process = None
        self._count_made(row)
        self._end_journal(row, "the farm ended the phone's actor before its stop line", "interrupted")

    def _last_words(self) -> None:
        self._drain()

    def run(self, on_tick: Callable[["Farm"], None] | None = None, tick_s: float = 0.2,
            give_up_after_s: float = 15.0) -> dict:  # fmt: skip
        try:
            return super().run(on_tick, tick_s, give_up_after_s)
        finally:
            self.release()

    def release(self) -> None:
        """End the phones' actors and the inbox (the rosters stay: they belong to the nodes)."""
        for f in self._journals.values():
            f.close()
        self._journals.clear()
        for actor in self.actors.values():
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:
                pass  # already gone
        self.actors.clear()
        try:
            self.ray.kill(self.inbox, no_restart=True)
        except Exception:
            pass

    def close(self) -> None:
        """Leave the cluster, if this farm joined it."""
        if self._connected_here and self.ray.is_initialized():
            self.ray.shutdown()

    def summary(self) -> dict:
        out = super().summary()
        totals = out["totals"]
        totals["bytes_to_driver"] = self.meter.total
        totals["bytes_per_move"] = self.meter.per_move(totals["moves"])
        totals["events_to_driver"] = self.meter.events
        totals["recording_bytes_to_driver"] = self.recording_bytes
        totals["calls_to_driver"] = self.calls_to_driver
        totals["nodes"] = len({r.node for r in self.rows.values()})
        per_row = {r.key: r for r in self.rows.values()}
        for dev in out["devices"]:
            row = next((r for r in per_row.values() if r.node == dev.get("node") and r.serial == dev["serial"]), None)
            if row is not None:
                dev["bytes_to_driver"] = self.meter.by_key.get(row.key, 0)
                dev["decision_ms_median"] = _median(row.decision_ms)
                dev["actor"] = self.actor_info.get(row.key)
        out["ray"] = {"address": self.address, "driver_node": self.driver_node,
                      "nodes": {n: {"address": a, "phones": sum(r.node == n for r in self.rows.values())}
                                for n, a in self.alive.items()}}  # fmt: skip
        return out


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return round(s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2, 3)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]

