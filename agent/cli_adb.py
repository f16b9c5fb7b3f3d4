"""`agent sim serve` (the simulated phone on the wire) and `agent bench capture` (how fast
screenshots and taps go through adb)."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np
import typer
from rich.progress import Progress
from rich.table import Table

from agent.cli_app import DEFAULT_PROFILES, bench_app, check_choice, console, parse_size_option, sim_app
from agent.errors import AgentError, DeviceError

if TYPE_CHECKING:
    from agent.device.adb import AdbTarget

DEFAULT_SERVE_PORT = 5555
# adb servers look for emulators on ports 5555-5585 when they start (adb port = console
# port + 1), so a phone served there may also be listed as emulator-<port - 1>.
_EMULATOR_PORTS = range(5555, 5586)
_STATUS_EVERY_S = 0.5


# -- sim serve ------------------------------------------------------------------


def _match3_phone(seed: int, size: tuple[int, int], variant: str, steps: int, serial: str):
    from agent.device.clock import RealClock
    from agent.games.match3.sim import SimPhone
    from agent.games.match3.rules import VARIANTS, Match3Config

    check_choice("--variant", variant, VARIANTS)
    config = Match3Config(variant=variant, start_steps=steps)
    return SimPhone(config=config, seed=seed, size=size, serial=serial, clock=RealClock())


def _match3_profile(phone, profiles: Path) -> Path:
    from agent.games.match3.sim_profile import save_sim_profile

    return save_sim_profile(phone, profiles)


def _match3_status(phone) -> str:
    s = phone.state
    left = f"steps left {s.steps_left}" if phone.config.variant == "step" else f"moves {s.moves_made}"
    return f"score {s.score}, {left}" + (", game over" if phone.game_over else "")


@dataclass(frozen=True)
class ServableGame:
    """How `agent sim serve` makes a game's simulated phone, its profile and a status line."""

    phone: Callable[..., object]  # (seed, size, variant, steps, serial) -> a Device
    profile: Callable[[object, Path], Path]
    status: Callable[[object], str]


SERVABLE_GAMES: dict[str, ServableGame] = {
    "match3": ServableGame(_match3_phone, _match3_profile, _match3_status),
}


@sim_app.command("serve")
def sim_serve(
    port: int = typer.Option(DEFAULT_SERVE_PORT, "--port", min=1, max=65535, help="TCP port on 127.0.0.1."),
    game: str = typer.Option("match3", "--game", help="The game on the phone's screen."),
    seed: int = typer.Option(0, "--seed", help="The game's seed."),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: str = typer.Option("step", "--variant", help="match3 rules: step or classic."),
    steps: int = typer.Option(30, "--steps", min=1, help="match3: steps at the start (step variant)."),
    unauthorized: bool = typer.Option(False, "--unauthorized", help="Never authorize adb (as a phone whose prompt nobody accepted)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Where to write the phone's profile."),
    connect: bool = typer.Option(False, "--connect", help="Also run `adb connect` on the adb server (ANDROID_ADB_SERVER_PORT)."),
) -> None:
    """Serve the simulated phone as a real adb device on 127.0.0.1:PORT until Ctrl-C."""
    from agent.simphone.adbd import AdbdServer

    check_choice("--game", game, tuple(SERVABLE_GAMES))
    spec = SERVABLE_GAMES[game]
    address = f"127.0.0.1:{port}"
    phone = spec.phone(seed=seed, size=parse_size_option(size), variant=variant, steps=steps, serial=f"sim-{port}")
    # The profile first: whoever sees the port open (a farm, a test) may play at once.
    profile = spec.profile(phone, profiles)
    server = AdbdServer(phone, port=port, unauthorized=unauthorized, on_event=lambda e: console.print(f"  {e}"))
    try:
        server.start()
    except OSError as exc:
        raise AgentError(
            f"cannot serve the phone on {address}: {exc.strerror or exc}",
            hint="pick another port with --port (another phone or an emulator may be there)",
        ) from None
    try:
        w, h = phone.screen_size()
        say = partial(console.print, soft_wrap=True, highlight=False, markup=False)  # paths stay whole
        say(f"serving {phone.model} {w}x{h} ({game}, seed {seed}) on {address}" +
            (" as an UNAUTHORIZED phone: adb will list it so, and refuse commands" if unauthorized else ""))
        say(f"profile: {profile}")
        say(f"connect: adb connect {address}")
        say(f"play:    agent play --serial {address}" + ("" if profiles == DEFAULT_PROFILES else f" --profiles {profiles}"))
        if port in _EMULATOR_PORTS:
            say(f"note: an adb server started from now on may also list it as emulator-{port - 1}; pass --serial to choose")
        if connect:
            _connect(address)
        console.print("Ctrl-C stops it.")
        _serve_until_stopped(server, lambda: spec.status(phone))
    finally:
        server.stop()
    console.print("stopped")


def _connect(address: str) -> None:
    from agent.device.adb import AdbTarget, connect_tcp

    target = AdbTarget()
    try:
        said = connect_tcp(address, target)
    except DeviceError as exc:
        # Serving goes on: the user can still connect by hand.
        console.print(f"[yellow]adb connect failed:[/] {exc}")
        return
    console.print(f"adb server at {target.address}: {said}")


def _serve_until_stopped(server, status: Callable[[], str]) -> None:
    # SIGTERM (kill, a test's terminate()) stops as cleanly as Ctrl-C.
    previous = signal.signal(signal.SIGTERM, lambda *_: server.stop())
    try:
        with console.status("serving") as spinner:
            while not server.wait(_STATUS_EVERY_S):
                spinner.update(
                    f"serving: {server.connections} adb connection(s), {server.commands} commands; {status()}"
                )
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


# -- bench capture ----------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Per-call wall times of one method, in milliseconds."""

    method: str
    n: int
    median_ms: float
    p95_ms: float
    per_s: float  # calls per second over the whole run (1000 / mean)

    @classmethod
    def of(cls, method: str, ms: list[float]) -> "Timing":
        a = np.asarray(ms, dtype=float)
        return cls(method, len(a), float(np.median(a)), float(np.percentile(a, 95)), 1000.0 / float(a.mean()))


@bench_app.command("capture")
def bench_capture(
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="A phone adb knows (default: start a private adb server and a simulated phone)."),
    frames: int = typer.Option(30, "--frames", min=3, help="Screenshots per method."),
    taps: int = typer.Option(20, "--taps", min=0, help="Taps to time (on the top-left pixel; 0 skips them)."),
    size: str = typer.Option("1080x2400", "--size", help="The simulated phone's screen WxH (without --serial)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Time screenshots (raw and PNG) and taps through the adb server."""
    from agent.device.adb import AdbDevice, select_serial

    wh = parse_size_option(size)
    with _phone_under_test(serial, wh) as (target, chosen, how):
        chosen = select_serial(chosen, target)
        results: list[Timing] = []
        with Progress(console=console, transient=True, disable=as_json) as progress:
            for method in ("raw", "png"):
                device = AdbDevice(chosen, target, capture=method)
                device.screencap()  # warm: the phone's first frame, the connection
                task = progress.add_task(f"{method} screenshots", total=frames)
                results.append(Timing.of(method, _time_calls(device.screencap, frames, lambda: progress.advance(task))))
            if taps:
                task = progress.add_task("taps", total=taps)
                results.append(Timing.of("tap", _time_calls(lambda: device.tap(0, 0), taps, lambda: progress.advance(task))))
        w, h = device.screen_size()
    if as_json:
        print(json.dumps({"serial": chosen, "model": device.model, "size": [w, h], "via": how,
                          "adb_server": target.address, "results": [asdict(r) for r in results]}))  # fmt: skip
        return
    table = Table(title=f"{device.model} {w}x{h} ({chosen}) via {how}", title_justify="left")
    for col in ("method", "n", "median ms", "p95 ms", "per second"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in results:
        label = {"raw": "screencap (raw)", "png": "screencap -p (PNG)", "tap": "input tap"}[r.method]
        table.add_row(label, str(r.n), f"{r.median_ms:.1f}", f"{r.p95_ms:.1f}", f"{r.per_s:.1f}")
    console.print(table)


def _time_calls(call: Callable[[], object], n: int, tick: Callable[[], None]) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        out.append((time.perf_counter() - t) * 1000.0)
        tick()
    return out


@contextmanager
def _phone_under_test(serial: Optional[str], size: tuple[int, int]) -> Iterator[tuple["AdbTarget", Optional[str], str]]:
    """(adb target, serial, description): the user's phone on their adb server, or a
    simulated phone served in a child process behind a private adb server."""
    from agent.device.adb import AdbTarget

    if serial is not None:
        target = AdbTarget()
        yield target, serial, f"the adb server at {target.address}"
        return
    with _private_phone(size) as (target, address):
        yield target, address, f"a private adb server (port {target.port}) and `agent sim serve`"


@contextmanager
def _private_phone(size: tuple[int, int]) -> Iterator[tuple["AdbTarget", str]]:
    from agent.device.adb import AdbTarget, connect_tcp, ensure_server, stop_server
    from agent.simphone.launch import end_process, free_port, log_file, start_sim_phone

    target = AdbTarget(port=free_port())
    phone_port = free_port()
    # No emulator scan on the private server (it would find other phones on 5555-5585),
    # and Linux's own USB backend, which starts at once where libusb waits 3 s.
    os.environ["ADB_LOCAL_TRANSPORT_MAX_PORT"] = "5554"
    os.environ.setdefault("ADB_LIBUSB", "0")
    with tempfile.TemporaryDirectory(prefix="puzzle-agent-bench-") as tmp, ExitStack() as cleanup:
        # Undone in reverse order, however far the start got: adb server, phone, log.
        log = cleanup.enter_context(log_file(Path(tmp), "phone.log"))
        with console.status("starting a simulated phone and a private adb server"):
            phone = start_sim_phone(phone_port, log, "--size", f"{size[0]}x{size[1]}", "--profiles", tmp)
            cleanup.callback(end_process, phone)
            cleanup.callback(stop_server, target)
            ensure_server(target)
            connect_tcp(f"127.0.0.1:{phone_port}", target)
        yield target, f"127.0.0.1:{phone_port}"
