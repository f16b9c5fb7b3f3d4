"""`agent bench capture`: how fast screenshots (each method: raw, gzip, PNG) and taps go
through the adb server, and which method auto mode picks on that phone."""

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
    latency_ms: float = typer.Option(0.0, "--latency-ms", min=0.0, max=10_000.0,
                                     help="The simulated phone's own cost of each screenshot, in ms, as a slow phone's (without --serial)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Time each screenshot method (raw, gzip, PNG) and taps through the adb server, and
    show which method auto mode picks."""
    from agent.device.adb import METHODS, AdbDevice, select_serial
    from agent.errors import CaptureError

    if serial is not None and latency_ms:
        raise typer.BadParameter("--latency-ms shapes the simulated phone: leave it out with --serial",
                                 param_hint="--latency-ms")  # fmt: skip
    wh = parse_size_option(size)
    with _phone_under_test(serial, wh, latency_ms) as (target, chosen, how):
        chosen = select_serial(chosen, target)
        results: list[Timing] = []
        failed: dict[str, str] = {}
        with Progress(console=console, transient=True, disable=as_json) as progress:
            auto = AdbDevice(chosen, target, capture="auto")
            with console.status("auto mode timing the methods") if not as_json else _quiet():
                picked = auto.choose_capture()
            report = auto.capture_report()
            for method in METHODS:
                if not isinstance(report.get(method), float):
                    failed[method] = str(report.get(method, "not timed"))
                    continue
                device = AdbDevice(chosen, target, capture=method)
                task = progress.add_task(f"{method} screenshots", total=frames)
                try:
                    device.screencap()  # warm: the phone's first frame, the connection
                    results.append(Timing.of(method, _time_calls(device.screencap, frames, partial(progress.advance, task))))
                except CaptureError as exc:
                    failed[method] = str(exc)
            if taps:
                task = progress.add_task("taps", total=taps)
                results.append(Timing.of("tap", _time_calls(lambda: auto.tap(0, 0), taps, partial(progress.advance, task))))
        w, h = auto.screen_size()
    if as_json:
        print(json.dumps({"serial": chosen, "model": auto.model, "size": [w, h], "via": how, "latency_ms": latency_ms,
                          "adb_server": target.address, "auto": picked, "auto_report": report, "failed": failed,
                          "results": [asdict(r) for r in results]}))  # fmt: skip
        return
    slow = f", {latency_ms:g} ms screenshot latency" if latency_ms else ""
    table = Table(title=f"{auto.model} {w}x{h} ({chosen}) via {how}{slow}", title_justify="left")
    for col in ("method", "n", "median ms", "p95 ms", "per second"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in results:
        label = _LABELS[r.method] + ("  <- auto" if r.method == picked else "")
        table.add_row(label, str(r.n), f"{r.median_ms:.1f}", f"{r.p95_ms:.1f}", f"{r.per_s:.1f}")
    for name, why in failed.items():
        table.add_row(_LABELS[name], "-", "-", "-", "-")
        console.print(f"{_LABELS[name]}: {why}")
    console.print(table)
    timed = ", ".join(f"{m} {v:.1f} ms" if isinstance(v, float) else f"{m}: {v}" for m, v in report.items())
    console.print(f"auto mode picks {picked} (its timing at connect: {timed})")


_LABELS = {"raw": "screencap (raw)", "gzip": "screencap | gzip -1", "png": "screencap -p (PNG)", "tap": "input tap"}


@contextmanager
def _quiet() -> Iterator[None]:
    yield


def _time_calls(call: Callable[[], object], n: int, tick: Callable[[], None]) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        out.append((time.perf_counter() - t) * 1000.0)
        tick()
    return out


@contextmanager
def _phone_under_test(serial: Optional[str], size: tuple[int, int], latency_ms: float = 0.0
                      ) -> Iterator[tuple["AdbTarget", Optional[str], str]]:
    """(adb target, serial, description): the user's phone on their adb server, or a
    simulated phone served in a child process behind a private adb server."""
    from agent.device.adb import AdbTarget

    if serial is not None:
        target = AdbTarget()
        yield target, serial, f"the adb server at {target.address}"
        return
    with _private_phone(size, latency_ms) as (target, address):
        yield target, address, f"a private adb server (port {target.port}) and `agent sim serve`"


@contextmanager
def _private_phone(size: tuple[int, int], latency_ms: float = 0.0) -> Iterator[tuple["AdbTarget", str]]:
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
            start_sim_phone(phone_port, log, "--size", f"{size[0]}x{size[1]}", "--profiles", tmp,
                            "--latency-ms", f"{latency_ms:g}", adopt=lambda p: cleanup.callback(end_process, p))  # fmt: skip
            cleanup.callback(stop_server, target)
            ensure_server(target)
            connect_tcp(f"127.0.0.1:{phone_port}", target)
        yield target, f"127.0.0.1:{phone_port}"
