"""`agent report RUN [-o report.html]`: one self-contained HTML page of a run folder.

Exit 0 with the page's path on stdout; 2 for input it cannot report on (no journal, an
unreadable journal, an output that cannot be written), said as `error:` and `fix:`.
Progress (pictures made of all, and the time so far) goes to stderr: a live line on a
terminal, a line every few seconds otherwise (a log keeps them all).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from agent.cli.app import err_console, output_file, say

LOG_EVERY_S = 2.0  # progress lines to a stderr that is no terminal, at most this often


def report(
    run: Path = typer.Argument(..., help="The run folder (runs/<timestamp>/) of `agent play` or `agent farm`, or one of its journals."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="The HTML file to write (default: report.html in the run folder)."),
) -> None:
    """Write an HTML report of a run: header, timeline, every move with its pictures, the stop and charts."""
    from agent.report import write_report

    output_file(output, "--output")
    started = time.monotonic()
    logged = [started]

    def line(done: int, total: int) -> str:
        return f"report: {done}/{total} pictures and page, {time.monotonic() - started:.1f} s"

    if err_console.is_terminal:
        with err_console.status("report: reading the run...") as status:
            path = write_report(run, output, lambda done, total: status.update(line(done, total)))
    else:

        def log(done: int, total: int) -> None:
            if time.monotonic() - logged[0] >= LOG_EVERY_S:
                logged[0] = time.monotonic()
                say(line(done, total), err=True)

        path = write_report(run, output, log)
    say(f"report written in {time.monotonic() - started:.1f} s", err=True)
    say(str(path))
