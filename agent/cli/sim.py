"""`agent sim serve` (a game's simulated phone on the wire, as a real adb device) and
`agent sim screenshot` (what a simulated phone shows)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from agent.cli.app import DEFAULT_PROFILES, chosen_game, console, parse_size_option, say, seed_option, output_dir, output_file
from agent.cli.play import GAME_HELP, LATENCY_HELP, SCENE_HELP, STEPS_HELP, VARIANT_HELP, WORLD_HELP
from agent import signals
from agent.errors import AgentError, DeviceError

app = typer.Typer(no_args_is_help=True, help="The simulated phones.")

DEFAULT_SERVE_PORT = 5555
# adb servers look for emulators on ports 5555-5585 when they start (adb port = console
# port + 1), so a phone served there may also be listed as emulator-<port - 1>.
_EMULATOR_PORTS = range(5555, 5586)
_STATUS_EVERY_S = 0.5


@app.command("serve")
def serve(
    port: int = typer.Option(DEFAULT_SERVE_PORT, "--port", min=1, max=65535, help="TCP port on 127.0.0.1."),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    seed: int = seed_option("The game's seed."),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help=STEPS_HELP),
    scene: Optional[str] = typer.Option(None, "--scene", help=SCENE_HELP),
    world: Optional[int] = typer.Option(None, "--world", min=0, max=100_000, help=WORLD_HELP),
    latency_ms: float = typer.Option(0.0, "--latency-ms", min=0.0, max=10_000.0, help=LATENCY_HELP),
    serial_captures: Optional[bool] = typer.Option(None, "--serial-captures/--parallel-captures",
                                                   help="Serve one screenshot at a time, as some phones do (default: as the saga world says; others parallel)."),
    truth: Optional[Path] = typer.Option(None, "--truth", help="Keep the simulator's own count of the game in this JSON file (rewritten as it changes, atomically)."),
    unauthorized: bool = typer.Option(False, "--unauthorized", help="Never authorize adb (as a phone whose prompt nobody accepted)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Where to write the phone's profile."),
    write_profile: bool = typer.Option(True, "--profile/--no-profile", help="Write the phone's profile (--no-profile: leave it to `agent calibrate`, as with a real phone)."),
    connect: bool = typer.Option(False, "--connect", help="Also run `adb connect` on the adb server (ANDROID_ADB_SERVER_PORT)."),
    stop_with_input: bool = typer.Option(False, "--stop-with-input", hidden=True,
                                         help="Stop when standard input ends: a farm's phone stops with the farm, even one that was killed."),
) -> None:
    """Serve a game's simulated phone as a real adb device on 127.0.0.1:PORT until Ctrl-C."""
    from agent.device.clock import RealClock
    from agent.simphone.adbd import AdbdServer

    chosen, settings = chosen_game(game, {"variant": variant, "steps": steps, "scene": scene, "world": world}, sim=True)
    output_dir(profiles, "--profiles")
    output_file(truth, "--truth", ".json")
    address = f"127.0.0.1:{port}"
    phone = chosen.sim.phone(settings, seed, parse_size_option(size), RealClock(), f"sim-{port}")
    # The profile first: whoever sees the port open (a farm, a test) may play at once.
    profile = chosen.sim.save_profile(phone, profiles)[0] if write_profile else None
    if serial_captures is None:
        serial_captures = bool(getattr(getattr(phone, "world", None), "serial_captures", False))
    server = AdbdServer(phone, port=port, unauthorized=unauthorized, on_event=lambda e: say(f"  {e}"),
                        latency_ms=latency_ms, serial_captures=serial_captures)  # fmt: skip
    try:
        server.start()
    except OSError as exc:
        raise AgentError(
            f"cannot serve the phone on {address}: {exc.strerror or exc}",
            hint="pick another port with --port (another phone or an emulator may be there)",
        ) from None
    try:
        stopped = _serve_until_stopped(
            server, lambda: chosen.sim.status_line(phone), _input_ended() if stop_with_input else None,
            None if truth is None else (lambda: _write_truth(truth, chosen.sim.truth(phone))),
            announce=lambda: _announce(phone, game, seed, address, port, profile, profiles, unauthorized, connect))
    finally:
        with signals.deferred():
            server.stop()
            if truth is not None:
                _write_truth(truth, chosen.sim.truth(phone))
    say(stopped)


def _announce(phone: Any, game: str, seed: int, address: str, port: int, profile: Path | None, profiles: Path,
              unauthorized: bool, connect: bool) -> None:  # fmt: skip
    w, h = phone.screen_size()
    say(f"serving {phone.model} {w}x{h} ({game}, seed {seed}) on {address}" +
        (" as an UNAUTHORIZED phone: adb will list it so, and refuse commands" if unauthorized else ""))
    say(f"profile: {profile}" if profile is not None else f"profile: none written; run `agent calibrate --serial {address}`")
    say(f"connect: adb connect {address}")
    play = f"agent play --serial {address}" + ("" if game == "match3" else f" --game {game}")
    say(f"play:    {play}" + ("" if profiles == DEFAULT_PROFILES else f" --profiles {profiles}"))
    if port in _EMULATOR_PORTS:
        say(f"note: an adb server started from now on may also list it as emulator-{port - 1}; pass --serial to choose")
    if connect:
        _connect(address)
    console.print("Ctrl-C (or SIGTERM, SIGHUP) stops it.")


def _connect(address: str) -> None:
    from agent.device.adb import AdbTarget, connect_tcp

    target = AdbTarget()
    try:
        said = connect_tcp(address, target)
    except DeviceError as exc:
        # Serving goes on: the user can still connect by hand.
        say(f"adb connect failed: {exc}")
        return
    say(f"adb server at {target.address}: {said}")


def _write_truth(path: Path, truth: dict[str, object]) -> None:
    import json

    from agent.files import write_atomic

    write_atomic(path, (json.dumps(truth, sort_keys=True) + "\n").encode())


def _serve_until_stopped(server: Any, status: Callable[[], str], input_ended: threading.Event | None,
                         tick: Callable[[], None] | None = None, announce: Callable[[], None] | None = None) -> str:  # fmt: skip
    """Serve until Ctrl-C, SIGTERM or SIGHUP (`agent.signals` turns each into the same
    KeyboardInterrupt), until standard input ends (when asked to watch it), or until the
    server stops; say which. Being told to stop is how serving ends: it exits 0."""
    try:
        # The port is open before the first line is printed: whoever sees it (a farm, a
        # test) may stop the phone while it still announces itself, a clean stop too.
        if announce is not None:
            announce()
        with console.status("serving") as spinner:
            while not server.wait(_STATUS_EVERY_S):
                if tick is not None:
                    tick()
                if input_ended is not None and input_ended.is_set():
                    return "stopped (standard input ended: whoever started the phone is gone)"
                spinner.update(
                    f"serving: {server.connections} adb connection(s), {server.commands} commands; {status()}"
                )
    except KeyboardInterrupt as exc:
        return f"stopped ({signals.name(signals.signal_of(exc))})"
    return "stopped"


def _input_ended() -> threading.Event:
    """Set once standard input ends: the pipe from the process that started this phone
    closes when that process ends, however it ended (SIGKILL included)."""
    ended = threading.Event()

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        ended.set()

    threading.Thread(target=watch, daemon=True).start()
    return ended


@app.command("screenshot")
def screenshot(
    out: Path = typer.Argument(..., help="PNG file to write."),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    seed: int = seed_option(),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    scene: Optional[str] = typer.Option(None, "--scene", help=SCENE_HELP),
    world: Optional[int] = typer.Option(None, "--world", min=0, max=100_000, help=WORLD_HELP),
) -> None:
    """Save what a game's simulated phone shows."""
    from agent.device.clock import ManualClock
    from agent.files import save_png

    output_file(out, "OUT", ".png")
    chosen, settings = chosen_game(game, {"variant": variant, "scene": scene, "world": world}, sim=True)
    phone = chosen.sim.phone(settings, seed, parse_size_option(size), ManualClock(), None)
    save_png(phone.screencap(), out)
    w, h = phone.screen_size()
    say(f"wrote {out} ({w}x{h}, {game}, seed {seed})")
