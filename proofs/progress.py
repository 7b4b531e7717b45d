"""Progress of long work on one stderr line, rewritten in place with the seconds elapsed; silent
unless stderr is a terminal (and the command is not run with --json or --quiet), so pipes, logs and
tests see nothing."""

from __future__ import annotations

import threading
import time

from ringproof.proofs.threads import Background


class Progress:
    """`progress("stage ...")` names what runs now; a ticker thread keeps the line's clock going;
    `progress.line("...")` prints a finished step that stays."""

    def __init__(self, stream, enabled: bool = True):
        isatty = getattr(stream, "isatty", None)
        self.stream, self.on = stream, bool(enabled and isatty and isatty())
        self._text, self._since, self._width = "", time.monotonic(), 0
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._clock = Background("progress", self._tick)    # paused around forks (proofs/threads.py)
        if self.on:
            self._clock.start()

    def __call__(self, text: str) -> None:
        if self.on:
            with self._lock:
                self._text, self._since = text, time.monotonic()
            self._draw()

    def line(self, text: str) -> None:
        """A line that stays (a finished step), printed above the running one."""
        if self.on:
            with self._lock:
                self.stream.write("\r" + " " * self._width + "\r" + text + "\n")
                self.stream.flush()
                self._width = 0
            self._draw()

    def _tick(self, stopping: threading.Event) -> None:
        while not stopping.wait(1.0) and not self._stop.is_set():
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            if not self._text or self._stop.is_set():
                return
            line = f"{self._text} ({time.monotonic() - self._since:.0f} s)"[:150]
            self.stream.write("\r" + line.ljust(self._width))
            self.stream.flush()
            self._width = max(self._width, len(line))

    def done(self) -> None:
        self._stop.set()
        self._clock.stop()
        with self._lock:
            if self.on and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._width = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.done()


def silent(text: str) -> None:
    """The progress callback of library calls: nothing."""
