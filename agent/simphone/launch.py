"""Starting simulated phones on the wire (`agent sim serve`) as child processes."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, cast

from agent.errors import AgentError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return cast(int, s.getsockname()[1])  # (host, port) for AF_INET


def start_sim_phone(port: int, log: IO[bytes], *args: str, timeout_s: float = 60.0) -> subprocess.Popen[bytes]:
    """`agent sim serve --port PORT ARGS...`, returned once it listens."""
    cmd = [sys.executable, "-m", "agent.cli", "sim", "serve", "--port", str(port), *args]
    # Its own session: a Ctrl-C at the terminal reaches whoever started it, who stops
    # its workers first and the phone last, not the phone under a worker's feet.
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_listening(proc, port, log, timeout_s)
    except BaseException:
        end_process(proc)
        raise
    return proc


def wait_listening(proc: subprocess.Popen[bytes], port: int, log: IO[bytes], timeout_s: float = 60.0) -> None:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if proc.poll() is not None:
            log.seek(0)
            said = log.read().decode("utf-8", "replace").strip()[-2000:]
            raise AgentError(f"the simulated phone exited at start: {said or f'exit status {proc.returncode}'}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AgentError(f"the simulated phone did not listen on port {port} within {timeout_s:g} s")


def end_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def log_file(directory: Path, name: str) -> IO[bytes]:
    directory.mkdir(parents=True, exist_ok=True)
    return open(directory / name, "w+b")  # a file, not a pipe: nobody has to drain it
