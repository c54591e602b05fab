"""Progress on a terminal: a line on stderr with the percent done, the rate and the time left.

Shown whenever stderr is a terminal (whatever stdout is: a report piped to a file or ``--json``
still shows its progress on the terminal), never otherwise. The line is cleared when the run ends
or is interrupted, so the report always starts on a line of its own.
"""

from __future__ import annotations

import sys
import time

#: Redraws at most this often (seconds).
REDRAW_SECONDS = 0.1
BAR_WIDTH = 24


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def progress_text(done: int, total: int, elapsed: float, what: str = "fights") -> str:
    """``[####....]  42.0%  420,000/1,000,000 fights  812,345 fights/s  ETA 0m01s``."""
    fraction = done / total if total else 1.0
    filled = int(BAR_WIDTH * fraction)
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = _duration((total - done) / rate) if rate > 0 else "?"
    return (f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {100 * fraction:5.1f}%  {done:,}/{total:,} {what}  "
            f"{rate:,.0f} {what}/s  ETA {eta}")


class ProgressLine:
    """``progress(done, total)`` callback drawing one line on stderr when it is a terminal."""

    def __init__(self, what: str = "fights") -> None:
        self.stream = sys.stderr
        try:
            self.enabled = self.stream.isatty()
        except (AttributeError, ValueError):
            self.enabled = False
        self.what = what
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < REDRAW_SECONDS and done < total):
            return
        self.last = now
        self.stream.write("\r\033[K" + progress_text(done, total, now - self.start, self.what))
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Clear the line, so that what follows starts at the beginning of an empty line."""
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
