"""The `agent` command line: a module per command group, registered here explicitly.

This package is the only code that imports typer or rich; the domain below it knows
nothing of the command line.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

import typer

from agent import __version__, signals
from agent.cli import bench, calibrate, devices, farm, plans, play, replay, report, screens, sim, solve
from agent.cli.app import console, print_error
from agent.errors import AgentError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Plays grid puzzle games on Android phones over ADB (or on a simulated phone).",
)


def _version(value: bool) -> None:
    if value:
        console.print(f"puzzle-agent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    pass


app.command("play")(play.play)
app.command("devices")(devices.devices)
app.command("calibrate")(calibrate.calibrate)
app.command("read")(calibrate.read)
app.command("solve")(solve.solve)
app.command("farm")(farm.farm)
app.command("farm-node")(farm.farm_node)
app.add_typer(sim.app, name="sim")
app.add_typer(plans.app, name="plans")
app.add_typer(bench.app, name="bench")
app.add_typer(screens.app, name="screens")
app.command("replay")(replay.replay)
app.command("report")(report.report)


def main() -> None:
    # SIGTERM and SIGHUP take Ctrl-C's path (a clean stop: journals and summaries written),
    # and the exit status says which signal it was: 130, 143, 129.
    with signals.stop_on_signals() as stop:
        code = _run(stop)
    sys.exit(code)


def _run(stop: signals.StopState) -> int | str | None:
    try:
        app()
    except AgentError as exc:
        print_error(exc)
        return exc.exit_code
    except SystemExit as exc:
        # typer turns a KeyboardInterrupt that reached it into 130, whatever the signal.
        if exc.code == signals.exit_code(signal.SIGINT) and stop.signum is not None:
            return signals.exit_code(stop.signum)
        return exc.code
    except KeyboardInterrupt as exc:  # one that came after the command ended
        return signals.exit_code(signals.signal_of(exc))
    except OSError as exc:
        # After SIGHUP the terminal is gone: what is left to print has nowhere to go.
        if exc.errno in (errno.EIO, errno.EPIPE) and stop.signum is not None:
            _mute()
            return signals.exit_code(stop.signum)
        raise
    except Exception as exc:
        # A signal that lands inside code that wraps what it raises (a class body being
        # imported: "Error calling __set_name__") is still that signal's clean stop.
        if stop.signum is not None and _caused_by_interrupt(exc):
            return signals.exit_code(stop.signum)
        raise
    finally:
        stop.raised = True  # the command has ended: a signal from now on is only recorded
    return 0


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, KeyboardInterrupt):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False


def _mute() -> None:
    """Point stdout and stderr at /dev/null, so the interpreter's own flush at exit
    does not fail on the closed terminal."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(devnull)
