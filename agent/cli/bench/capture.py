"""`agent bench capture`: how fast screenshots and taps go through the adb server."""

from __future__ import annotations

import json
import os
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

from agent.cli.app import console, parse_size_option

if TYPE_CHECKING:
    from agent.device.adb import AdbTarget


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
                results.append(Timing.of(method, _time_calls(device.screencap, frames, partial(progress.advance, task))))
            if taps:
                task = progress.add_task("taps", total=taps)
                results.append(Timing.of("tap", _time_calls(lambda: device.tap(0, 0), taps, partial(progress.advance, task))))
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
