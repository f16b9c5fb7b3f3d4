"""`agent devices`: the phones adb sees."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from agent.cli.app import console


def devices(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The phones adb sees, with model, resolution and state."""
    from agent.device.adb import AdbTarget, list_devices

    found = list_devices(AdbTarget())
    if as_json:
        print(json.dumps([
            {"serial": d.serial, "state": d.state, "model": d.model,
             "resolution": list(d.resolution) if d.resolution else None} for d in found
        ]))  # fmt: skip
        return
    if not found:
        console.print("no devices: plug in a phone with USB debugging on, or use `agent play --sim`")
        return
    t = Table("serial", "state", "model", "resolution")
    for d in found:
        res = f"{d.resolution[0]}x{d.resolution[1]}" if d.resolution else "-"
        t.add_row(d.serial, d.state, d.model or "-", res)
    console.print(t)
