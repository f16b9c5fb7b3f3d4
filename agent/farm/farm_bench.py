"""`agent bench farm`: what a farm of simulated phones on the wire does per second, on one
machine (the local farm: a worker process per phone) and on Ray (an actor per phone on
the node it is attached to), measured the same way in the same run.

Decisions per second count play only (from the first worker's start to the last one's
end, as each reports it), not the phones' or the cluster's start-up; the latency is the
read + decide time of each move; the bytes are what reached the driver.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agent.farm.controller import DeviceRow, Farm, FarmOptions


@dataclass
class FarmFigures:
    kind: str  # "local" or "ray"
    devices: int
    nodes: int
    moves: int
    done: int
    decisions_per_s: float
    move_cycle_s_median: float | None
    decide_ms_median: float | None
    decide_ms_p95: float | None
    bytes_per_move: float | None = None
    on_their_nodes: bool | None = None  # Ray: every actor ran on its phone's node
    scaling_efficiency: float | None = None  # decisions/s against the smallest size's, per device
    notes: list[str] = field(default_factory=list)  # phones that did not play all their moves, and why
    calls_per_move: float | None = None  # Ray: calls to the driver's inbox (a batch of events each) per move
    runs: list[float] = field(default_factory=list)  # decisions/s of each repeat (the figure is their median)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def figures(kind: str, rows: list[DeviceRow], nodes: int, bytes_per_move: float | None = None,
            on_their_nodes: bool | None = None, calls: int | None = None) -> FarmFigures:  # fmt: skip
    play_s = max((r.play_s for r in rows), default=0.0)
    total = sum(r.moves for r in rows)
    cycle = [r.play_s / r.moves for r in rows if r.moves]
    decide = [ms for r in rows for ms in r.decision_ms]
    rate = total / play_s if play_s else 0.0
    out = FarmFigures(
        kind, len(rows), nodes, total, sum(r.state == "done" for r in rows), rate,
        float(np.median(cycle)) if cycle else None, float(np.median(decide)) if decide else None,
        float(np.percentile(decide, 95)) if decide else None, bytes_per_move, on_their_nodes,
        runs=[rate],
    )  # fmt: skip
    out.notes = [f"{kind} farm of {len(rows)}: {r.key} ended {r.state} after {r.moves} moves"
                 + (f": {r.last_error}" if r.last_error else "") for r in rows if r.state != "done"]  # fmt: skip
    if calls is not None and total:
        out.calls_per_move = round(calls / total, 2)
    return out


def local_farm(per_node: int, moves: int, settings: dict[str, Any], game_args: Sequence[str],
               nodes: int = 2) -> FarmFigures:  # fmt: skip
    """The Ray farm's `nodes * per_node` phones, playing the very same games (the same
    seeds), on one private adb server, a worker process each."""
    from agent.device.adb import AdbTarget, stop_server
    from agent.farm.ray_node import node_seed
    from agent.simphone.fleet import SimFleet
    from agent.simphone.launch import free_port

    with tempfile.TemporaryDirectory(prefix="puzzle-agent-farm-") as tmp, ExitStack() as stack:
        target = AdbTarget("127.0.0.1", free_port())
        stack.callback(stop_server, target)
        fleets = [stack.enter_context(SimFleet(per_node, target, profiles=Path(tmp) / "profiles", game_args=game_args,
                                               log_dir=Path(tmp) / "logs" / f"node{i}", base_seed=node_seed(i)))
                  for i in range(nodes)]  # fmt: skip
        serials = tuple(s for fleet in fleets for s in fleet.serials)
        options = FarmOptions(moves=moves, profiles=Path(tmp) / "profiles", serials=serials, settings=settings)
        farm = Farm([target], Path(tmp) / "run", options)
        farm.run()
        _raise_if_interrupted(farm)
        return figures("local", list(farm.rows.values()), 1)


def ray_farm(per_node: int, moves: int, settings: dict[str, Any], game_args: Sequence[str],
             nodes: int = 2) -> FarmFigures:  # fmt: skip
    """A local Ray cluster of `nodes` nodes on 127.0.0.1, each with its own adb server and
    `per_node` simulated phones, an actor per phone on its phone's node."""
    from agent.farm.ray_farm import RayFarm
    from agent.farm.ray_node import sim_cluster

    with tempfile.TemporaryDirectory(prefix="puzzle-agent-ray-") as tmp:
        root = Path(tmp)
        with sim_cluster(nodes, per_node, root / "profiles", root / "logs", game_args=game_args) as cluster:
            serials = tuple(s for phones in cluster.serials for s in phones)
            options = FarmOptions(moves=moves, profiles=root / "profiles", serials=serials, settings=settings)
            farm = RayFarm(None, root / "run", options, node_dir=root / "nodes")
            try:
                summary = farm.run()
                _raise_if_interrupted(farm)
            finally:
                farm.close()
            # where each actor said it ran, against the node its phone is attached to
            placed = all((d.get("actor") or {}).get("node_id") == _node_of(cluster, d) for d in summary["devices"])
        return figures("ray", list(farm.rows.values()), nodes, summary["totals"].get("bytes_per_move"), placed,
                       summary["totals"].get("calls_to_driver"))  # fmt: skip


def _node_of(cluster: Any, device: dict[str, Any]) -> str | None:
    try:
        return str(cluster.node_of(device["serial"]))
    except StopIteration:
        return None


def _raise_if_interrupted(farm: Farm) -> None:
    if farm.interrupted:  # the farm stopped cleanly on a signal: so does the bench
        import signal

        from agent.signals import Interrupted

        raise Interrupted(farm.stop_signal or signal.SIGINT)


def with_efficiency(results: list[FarmFigures]) -> list[FarmFigures]:
    """Each size's decisions/s per device against the smallest size's of the same kind."""
    for kind in {r.kind for r in results}:
        same = [r for r in results if r.kind == kind]
        base = min(same, key=lambda r: r.devices)
        per_device = base.decisions_per_s / base.devices if base.devices else 0.0
        for r in same:
            r.scaling_efficiency = r.decisions_per_s / (r.devices * per_device) if per_device else None
    return results


def bench_ray_against_local(per_node: Sequence[int], moves: int, settings: dict[str, Any], game_args: Sequence[str],
                            nodes: int = 2, progress: Callable[[str, int, int], None] | None = None,
                            repeats: int = 1) -> list[FarmFigures]:  # fmt: skip
    """At each size, the local farm with `nodes * n` phones and the Ray farm with `n` phones
    on each of `nodes` nodes, in turns; `repeats` times over, each figure the median run
    (a farm on two shared cores is noisy: one slow phone sets a run's decisions/s)."""
    runs: dict[tuple[str, int], list[FarmFigures]] = {}
    total = 2 * len(per_node) * repeats
    done = 0
    for rep in range(repeats):
        for n in per_node:
            for kind in ("local", "ray"):
                if progress is not None:
                    what = f"local farm of {nodes * n}" if kind == "local" else f"Ray farm of {nodes} x {n}"
                    progress(what + (f" (run {rep + 1} of {repeats})" if repeats > 1 else ""), done, total)
                one = local_farm(n, moves, settings, game_args, nodes) if kind == "local" else \
                    ray_farm(n, moves, settings, game_args, nodes)  # fmt: skip
                runs.setdefault((kind, n), []).append(one)
                done += 1
    if progress is not None:
        progress("done", total, total)
    return with_efficiency([median_run(same) for same in runs.values()])


def median_run(same: list[FarmFigures]) -> FarmFigures:
    """The run of median decisions/s, with every run's decisions/s and every run's notes."""
    ordered = sorted(same, key=lambda r: r.decisions_per_s)
    mid = ordered[(len(ordered) - 1) // 2]
    mid.runs = [r.decisions_per_s for r in same]
    mid.notes = [note for r in same for note in r.notes]
    return mid
