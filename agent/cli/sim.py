"""`agent sim serve` (a game's simulated phone on the wire, as a real adb device) and
`agent sim screenshot` (what a simulated phone shows)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from agent.cli.app import DEFAULT_PROFILES, chosen_game, console, parse_size_option, say
from agent.cli.play import GAME_HELP, STEPS_HELP, VARIANT_HELP
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
    seed: int = typer.Option(0, "--seed", help="The game's seed."),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help=STEPS_HELP),
    unauthorized: bool = typer.Option(False, "--unauthorized", help="Never authorize adb (as a phone whose prompt nobody accepted)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Where to write the phone's profile."),
    connect: bool = typer.Option(False, "--connect", help="Also run `adb connect` on the adb server (ANDROID_ADB_SERVER_PORT)."),
) -> None:
    """Serve a game's simulated phone as a real adb device on 127.0.0.1:PORT until Ctrl-C."""
    from agent.device.clock import RealClock
    from agent.simphone.adbd import AdbdServer

    chosen, settings = chosen_game(game, {"variant": variant, "steps": steps}, sim=True)
    address = f"127.0.0.1:{port}"
    phone = chosen.sim.phone(settings, seed, parse_size_option(size), RealClock(), f"sim-{port}")
    # The profile first: whoever sees the port open (a farm, a test) may play at once.
    profile, _ = chosen.sim.save_profile(phone, profiles)
    server = AdbdServer(phone, port=port, unauthorized=unauthorized, on_event=lambda e: say(f"  {e}"))
    try:
        server.start()
    except OSError as exc:
        raise AgentError(
            f"cannot serve the phone on {address}: {exc.strerror or exc}",
            hint="pick another port with --port (another phone or an emulator may be there)",
        ) from None
    try:
        w, h = phone.screen_size()
        say(f"serving {phone.model} {w}x{h} ({game}, seed {seed}) on {address}" +
            (" as an UNAUTHORIZED phone: adb will list it so, and refuse commands" if unauthorized else ""))
        say(f"profile: {profile}")
        say(f"connect: adb connect {address}")
        play = f"agent play --serial {address}" + ("" if game == "match3" else f" --game {game}")
        say(f"play:    {play}" + ("" if profiles == DEFAULT_PROFILES else f" --profiles {profiles}"))
        if port in _EMULATOR_PORTS:
            say(f"note: an adb server started from now on may also list it as emulator-{port - 1}; pass --serial to choose")
        if connect:
            _connect(address)
        console.print("Ctrl-C stops it.")
        _serve_until_stopped(server, lambda: chosen.sim.status_line(phone))
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
        say(f"adb connect failed: {exc}")
        return
    say(f"adb server at {target.address}: {said}")


def _serve_until_stopped(server: Any, status: Callable[[], str]) -> None:
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


@app.command("screenshot")
def screenshot(
    out: Path = typer.Argument(..., help="PNG file to write."),
    game: str = typer.Option("match3", "--game", help=GAME_HELP),
    seed: int = typer.Option(0, "--seed"),
    size: str = typer.Option("1080x2400", "--size", help="Screen WxH."),
    variant: Optional[str] = typer.Option(None, "--variant", help=VARIANT_HELP),
) -> None:
    """Save what a game's simulated phone shows."""
    from agent.device.clock import ManualClock
    from agent.files import save_png

    if out.suffix.lower() != ".png":
        raise typer.BadParameter(f"{out} should end in .png", param_hint="OUT")
    chosen, settings = chosen_game(game, {"variant": variant}, sim=True)
    phone = chosen.sim.phone(settings, seed, parse_size_option(size), ManualClock(), None)
    save_png(phone.screencap(), out)
    w, h = phone.screen_size()
    say(f"wrote {out} ({w}x{h}, {game}, seed {seed})")
