"""The combatsim command run as a user runs it, and stopped with Ctrl-C as a terminal stops it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def combatsim_command() -> list[str]:
    """The installed console script beside this Python, else the module."""
    script = Path(sys.executable).with_name("combatsim")
    if script.exists():
        return [str(script)]
    found = shutil.which("combatsim")
    return [found] if found else [sys.executable, "-m", "combatsim"]


@dataclass
class Stopped:
    returncode: int
    out: str
    err: str
    #: seconds from the (last) SIGINT to the process's end
    stopped_after: float


def interrupt(arguments: list[str], wait: float | Callable[[subprocess.Popen], object], *, group: bool = False,
              second_after: float | None = None, cwd: Path | None = None, timeout: float = 60) -> Stopped:
    """Start ``combatsim ARGUMENTS``, wait (``wait`` seconds, or until ``wait(process)`` returns),
    send SIGINT, and a second one ``second_after`` seconds later if given. With ``group`` the
    command runs in a process group of its own and the signals go to the whole group, as a
    terminal sends them (worker processes get them too). Whatever is left is killed."""
    process = subprocess.Popen([*combatsim_command(), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=cwd, start_new_session=group)

    def send(signal_number: int) -> None:
        if group:
            os.killpg(process.pid, signal_number)
        else:
            process.send_signal(signal_number)

    try:
        if callable(wait):
            wait(process)
        else:
            time.sleep(wait)
        send(signal.SIGINT)
        if second_after is not None:
            time.sleep(second_after)
            send(signal.SIGINT)
        sent = time.monotonic()
        out, err = process.communicate(timeout=timeout)
        stopped_after = time.monotonic() - sent
    finally:
        with contextlib.suppress(ProcessLookupError):
            send(signal.SIGKILL)
        process.wait()
    return Stopped(process.returncode, out, err, stopped_after)
