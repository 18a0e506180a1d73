"""A small dependency-free progress bar on stderr.

Shows ``desc [#####.....] count/total rate/s ETA m:ss``; redraws at most every
``min_interval`` seconds; silent when the stream is not a terminal unless ``force``.

    with Progress(total=len(items), desc="replay") as bar:
        for item in items:
            ...
            bar.update()
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


def _fmt_time(seconds: float) -> str:
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """A count/total progress bar with rate and ETA.

    Parameters
    ----------
    total : int
        Number of steps (> 0 shows a bar; 0 shows only the count and rate).
    desc : str
        Label in front of the bar.
    stream : file, optional
        Where to draw; ``sys.stderr`` by default.
    force : bool
        Draw even when ``stream`` is not a TTY (a final line only is written then).
    min_interval : float
        Seconds between redraws.
    width : int
        Characters of the bar itself.
    """

    def __init__(
        self,
        total: int,
        desc: str = "",
        stream: TextIO | None = None,
        force: bool = False,
        min_interval: float = 0.1,
        width: int = 30,
    ) -> None:
        if not isinstance(total, int) or total < 0:
            raise ValueError(f"Progress: total must be a non-negative int, got {total!r}")
        self.total = total
        self.desc = desc
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.enabled = bool(isatty or force)
        self.interactive = bool(isatty)
        self.min_interval = min_interval
        self.width = width
        self.count = 0
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._closed = False

    def update(self, n: int = 1) -> None:
        """Advance by ``n`` steps."""
        self.set(self.count + n)

    def set(self, count: int) -> None:
        """Set the number of steps done."""
        self.count = count
        if not self.interactive:
            return
        now = time.monotonic()
        if now - self._last_draw >= self.min_interval or (self.total and count >= self.total):
            self._last_draw = now
            self._draw(now, end="")

    def line(self, now: float | None = None) -> str:
        """The text of the bar right now."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self.start, 1e-9)
        rate = self.count / elapsed
        prefix = f"{self.desc} " if self.desc else ""
        if self.total:
            frac = min(self.count / self.total, 1.0)
            filled = int(frac * self.width)
            bar = "#" * filled + "." * (self.width - filled)
            eta = (self.total - self.count) / rate if rate > 0 else 0.0
            return (
                f"{prefix}[{bar}] {self.count}/{self.total} {rate:,.0f}/s "
                f"ETA {_fmt_time(eta)} elapsed {_fmt_time(elapsed)}"
            )
        return f"{prefix}{self.count} {rate:,.0f}/s elapsed {_fmt_time(elapsed)}"

    def _draw(self, now: float, end: str) -> None:
        self.stream.write("\r" + self.line(now) + end)
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw(time.monotonic(), end="\n")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
