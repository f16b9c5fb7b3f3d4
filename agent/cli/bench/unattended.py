"""`agent bench unattended`: the commercial-style game played as a user would, unattended.

For each seed: the game served on the wire (`agent sim serve --scene saga`, with a
screencap latency) behind a private real adb server; `agent calibrate` on it, then
`agent play --launch`, each as its own process, as a user runs them; the play is
stopped once the game's own count says enough levels are complete (or at its move cap).
The figures come from both sides: the game's count (swipes accepted, undone, ignored,
made while the board moved, dialogs shown and closed, levels) and the agent's journal
and summary (moves per minute, captures per move, median move cycle), against the
targets of issue 16.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from agent.cli.app import console, output_dir, say
from agent.errors import AgentError

# Seeds whose first level opens on the board (a dialog there would make calibration
# refuse, rightly) and whose first levels bring each kind of interruption.
SEARCH_SEEDS = 200


@dataclass
class SeedResult:
    seed: int
    levels_completed: int
    calibrate_s: float
    play_s: float
    moves: int
    swipes_accepted: int
    swipes_undone: int
    swipes_ignored: int
    swipes_while_moving: int
    dialogs_shown: int
    dialogs_closed: int
    forbidden_taps: int
    app_switches: int
    launches: int
    moves_per_min: float
    captures_per_move: float
    median_cycle_s: float
    capture_ms: float
    animation_ms: float
    overhead_s: float  # median over moves of (its cycle - its own animation): the target is 3 captures
    stop_reason: str
    journal: str

    @property
    def swipes(self) -> int:
        return self.swipes_accepted + self.swipes_undone + self.swipes_ignored

    @property
    def accepted_share(self) -> float:
        return self.swipes_accepted / self.swipes if self.swipes else 0.0

    @property
    def cycle_target_s(self) -> float:
        return (self.animation_ms + 3 * self.capture_ms) / 1000.0

    @property
    def within_target(self) -> bool:
        """Each move's cycle against its own animation + 3 captures, by the median."""
        return self.overhead_s <= 3 * self.capture_ms / 1000.0


def pick_seeds(first: int, n: int, levels: int) -> list[int]:
    """The first n seeds from `first` whose level 1 opens on the board, and whose first
    levels show a popup, an ad and another app between them."""
    from agent.games.match3.saga.phone import draw_scripts

    out: list[int] = []
    for seed in range(first, first + SEARCH_SEEDS):
        scripts = draw_scripts(seed, levels)
        if scripts[0].daily or scripts[0].offer:
            continue
        kinds = {"popup": any(s.daily or s.offer or s.tip_after is not None for s in scripts[1:])
                 or scripts[0].tip_after is not None, "ad": any(s.ad_after for s in scripts[:-1]),
                 "switch": any(s.switch_after is not None for s in scripts)}  # fmt: skip
        if all(kinds.values()):
            out.append(seed)
        if len(out) == n:
            break
    return out


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent.cli", *args]


def run_seed(seed: int, levels: int, latency_ms: float, max_moves: int, work: Path, status: Any) -> SeedResult:
    from agent.device.adb import AdbTarget, connect_tcp, ensure_server, stop_server
    from agent.simphone.launch import end_process, free_port, log_file, start_sim_phone

    target = AdbTarget(port=free_port())
    phone_port = free_port()
    address = f"127.0.0.1:{phone_port}"
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(target.port), "ADB_LOCAL_TRANSPORT_MAX_PORT": "5554"}
    env.setdefault("ADB_LIBUSB", "0")
    os.environ.update({k: env[k] for k in ("ADB_LOCAL_TRANSPORT_MAX_PORT", "ADB_LIBUSB")})
    truth_path, profiles, runs = work / "truth.json", work / "profiles", work / "runs"
    with ExitStack() as cleanup:
        log = cleanup.enter_context(log_file(work, "phone.log"))
        status.update(f"seed {seed}: starting the game and a private adb server (port {target.port})")
        phone = start_sim_phone(phone_port, log, "--scene", "saga", "--seed", str(seed), "--latency-ms",
                                f"{latency_ms:g}", "--no-profile", "--truth", str(truth_path),
                                "--profiles", str(profiles),
                                adopt=lambda p: cleanup.callback(end_process, p))  # fmt: skip
        cleanup.callback(stop_server, target)
        ensure_server(target)
        connect_tcp(address, target)
        status.update(f"seed {seed}: agent calibrate --serial {address}")
        t0 = time.monotonic()
        cal = subprocess.run(_cli("calibrate", "--serial", address, "--profiles", str(profiles), "--yes", "--json"),
                             env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        calibrate_s = time.monotonic() - t0
        if cal.returncode != 0:
            raise AgentError(f"seed {seed}: agent calibrate failed (exit {cal.returncode}): {cal.stderr.strip()[-600:]}",
                             hint=f"the phone's log and profiles are in {work} with --keep")  # fmt: skip
        t0 = time.monotonic()
        play = subprocess.Popen(_cli("play", "--serial", address, "--profiles", str(profiles), "--runs", str(runs),
                                     "--launch", "--moves", str(max_moves), "--json"),
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        truth: dict[str, Any] = {}
        while play.poll() is None:
            time.sleep(0.5)
            truth = _read_truth(truth_path) or truth
            done = int(truth.get("levels_completed", 0))
            status.update(f"seed {seed}: agent play: level {truth.get('level', '?')}, {done} of {levels} completed, "
                          f"{truth.get('swipes_accepted', 0)} swipes taken, {time.monotonic() - t0:.0f} s")  # fmt: skip
            if done >= levels and truth.get("screen") == "board":
                # the levels complete and the next board up, its dialogs closed
                play.send_signal(signal.SIGINT)  # the play stops at once, with its stop line
                break
        out, err = play.communicate(timeout=120)
        play_s = time.monotonic() - t0
        phone.send_signal(signal.SIGINT)  # the phone writes its final count as it stops
        try:
            phone.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        truth = _read_truth(truth_path) or truth
    try:
        summary = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise AgentError(f"seed {seed}: agent play printed no summary (exit {play.returncode}): {err.strip()[-600:]}",
                         hint=f"the journal and the phone's log are in {work} with --keep") from None  # fmt: skip
    moves = int(summary.get("moves", 0))
    return SeedResult(
        seed=seed, levels_completed=int(truth.get("levels_completed", 0)), calibrate_s=round(calibrate_s, 2),
        play_s=round(play_s, 1), moves=moves, swipes_accepted=int(truth.get("swipes_accepted", 0)),
        swipes_undone=int(truth.get("swipes_undone", 0)), swipes_ignored=int(truth.get("swipes_ignored", 0)),
        swipes_while_moving=int(truth.get("swipes_while_moving", 0)), dialogs_shown=int(truth.get("dialogs_shown", 0)),
        dialogs_closed=int(truth.get("dialogs_closed", 0)), forbidden_taps=int(truth.get("forbidden_taps", 0)),
        app_switches=int(truth.get("app_switches", 0)), launches=int(truth.get("launches", 0)),
        moves_per_min=round(60.0 * moves / play_s, 1) if play_s else 0.0,
        captures_per_move=float(summary.get("captures_per_move", 0.0)),
        median_cycle_s=float(summary.get("median_cycle_s", 0.0)), capture_ms=float(summary.get("capture_ms", 0.0)),
        animation_ms=float(truth.get("animation_ms_median", 0.0)),
        overhead_s=_overhead(summary, truth), stop_reason=str(summary.get("stop_reason", "")),
        journal=str(summary.get("journal", "")),
    )  # fmt: skip


def _overhead(summary: dict[str, Any], truth: dict[str, Any]) -> float:
    """The median of (a move's cycle - that move's own animation), from the journal's
    cycles and the game's list of animations; each move's cycle ends with the next swipe."""
    import statistics

    from agent.play.journal import read_journal

    anims = [float(v) / 1000.0 for v in truth.get("animation_ms_each", [])]
    try:
        decisions = [r for r in read_journal(str(summary.get("journal", ""))) if r["type"] == "decision"]
    except (OSError, ValueError):
        return float("nan")
    if len(anims) < len(decisions) - 1:  # swipes the game did not take: no pairing by order
        return float("nan")
    over = [float(r["cycle_s"]) - anims[int(r["index"]) - 2] for r in decisions if "cycle_s" in r and r["index"] >= 2]
    return round(statistics.median(over), 3) if over else float("nan")


def _read_truth(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def bench_unattended(
    seeds: int = typer.Option(1, "--seeds", min=1, max=20, help="Games to play, each from its own seed."),
    first_seed: int = typer.Option(0, "--first-seed", min=0, max=10_000, help="Seeds are picked from here on."),
    levels: int = typer.Option(3, "--levels", min=1, max=10, help="Levels each game must complete."),
    latency_ms: float = typer.Option(250.0, "--latency-ms", min=0.0, max=5000.0, help="The phone's screencap latency."),
    max_moves: int = typer.Option(150, "--max-moves", min=1, max=5000, help="The play's move cap per game."),
    keep: Optional[Path] = typer.Option(None, "--keep", help="Keep each game's profiles, journals and logs here."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Play the commercial-style game unattended through the real adb server, from
    `agent calibrate` then `agent play`, and print what the game and the agent counted."""
    if keep is not None:
        output_dir(keep, "--keep")
    chosen = pick_seeds(first_seed, seeds, levels)
    if len(chosen) < seeds:
        raise typer.BadParameter(f"only {len(chosen)} suitable seeds from {first_seed}", param_hint="--first-seed")
    results: list[SeedResult] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="puzzle-agent-unattended-") as tmp:
        root = keep if keep is not None else Path(tmp)
        with console.status("starting") as status:
            for i, seed in enumerate(chosen, 1):
                work = root / f"seed-{seed}"
                work.mkdir(parents=True, exist_ok=True)

                class _Status:
                    def update(self, text: str, i: int = i) -> None:
                        status.update(f"[{i}/{len(chosen)}, {time.monotonic() - start:.0f} s] {text}")

                results.append(run_seed(seed, levels, latency_ms, max_moves, work, _Status()))
    _report(results, levels, latency_ms, as_json)


def _report(results: list[SeedResult], levels: int, latency_ms: float, as_json: bool) -> None:
    swipes = sum(r.swipes for r in results)
    accepted = sum(r.swipes_accepted for r in results)
    totals = {
        "games": len(results), "levels_target": levels,
        "games_with_all_levels": sum(r.levels_completed >= levels for r in results),
        "accepted_share": round(accepted / swipes, 4) if swipes else 0.0,
        "swipes_while_moving": sum(r.swipes_while_moving for r in results),
        "dialogs_shown": sum(r.dialogs_shown for r in results), "dialogs_closed": sum(r.dialogs_closed for r in results),
        "forbidden_taps": sum(r.forbidden_taps for r in results),
        "cycle_within_target": sum(r.within_target for r in results),
    }  # fmt: skip
    if as_json:
        print(json.dumps({"latency_ms": latency_ms, "totals": totals,
                          "games": [asdict(r) | {"cycle_target_s": round(r.cycle_target_s, 3),
                                                 "within_target": r.within_target} for r in results]}))
        return
    t = Table(title=f"unattended play of the commercial-style game through the real adb server, {latency_ms:g} ms "
                    "screencap latency", title_justify="left")  # fmt: skip
    for col in ("seed", "levels", "taken/undone/ignored", "moving", "dialogs", "forbidden", "moves/min", "caps/move",
                "cycle s", "over anim s (max)"):  # fmt: skip
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(str(r.seed), f"{r.levels_completed}/{levels}",
                  f"{r.swipes_accepted}/{r.swipes_undone}/{r.swipes_ignored}", str(r.swipes_while_moving),
                  f"{r.dialogs_closed}/{r.dialogs_shown}", str(r.forbidden_taps), f"{r.moves_per_min:.1f}",
                  f"{r.captures_per_move:.1f}", f"{r.median_cycle_s:.2f}",
                  f"{r.overhead_s:.2f} ({3 * r.capture_ms / 1000:.2f})")  # fmt: skip
    console.print(t, width=max(console.width, 140))
    say(f"games with {levels} levels in a row: {totals['games_with_all_levels']}/{len(results)}; swipes taken "
        f"{100 * totals['accepted_share']:.1f}% (target >= 95%); swipes while the board moved "
        f"{totals['swipes_while_moving']} (target 0); dialogs closed {totals['dialogs_closed']}/"
        f"{totals['dialogs_shown']}; forbidden taps {totals['forbidden_taps']}; median move cycle within its "
        f"own animation + 3 captures: {totals['cycle_within_target']}/{len(results)}")
    for r in results:
        say(f"seed {r.seed}: stopped: {r.stop_reason}")
    say("calibrate " + ", ".join(f"{r.calibrate_s:.1f} s" for r in results) + "; journals: "
        + ", ".join(r.journal for r in results))
