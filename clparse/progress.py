"""Progress on stderr: count, rate, and total with ETA when the total is known; silent when not a terminal.

Redirected stderr (a log file, a test) gets no progress lines at all, so logs hold only what matters.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO, TypeVar

_P = TypeVar("_P", bound="Progress")


def is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """``with Progress("parsing", total=None) as bar: bar.update()``; redraws at most 5 times a second."""

    def __init__(self, label: str, total: int | None = None, unit: str = "", stream: IO[str] | None = None,
                 enabled: bool | None = None) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self.done = 0
        self.initial = 0  # done before this run started (a resume): counted, but not in the rate and ETA
        self.start = time.monotonic()
        self._drawn = 0.0
        self._width = 0

    def __enter__(self: _P) -> _P:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._drawn >= 0.2 or self.done == self.total):
            self._drawn = now
            self._draw(self.line(now, note))

    def line(self, now: float | None = None, note: str = "") -> str:
        """The text of the progress line (tested directly: drawing needs a terminal)."""
        elapsed = max((time.monotonic() if now is None else now) - self.start, 1e-9)
        rate = (self.done - self.initial) / elapsed
        unit = f" {self.unit}" if self.unit else ""
        parts = [f"{self.label}: {self.done:,}"]
        if self.total:
            parts[0] += f"/{self.total:,}{unit} ({100 * self.done / self.total:.0f} %)"
        else:
            parts[0] += unit
        parts.append(f"{rate:.3g}/s" if rate < 100 else f"{rate:,.0f}/s")
        if self.total and rate > 0:
            parts.append(f"ETA {_clock(max(self.total - self.done, 0) / rate)}")
        parts.append(f"elapsed {_clock(elapsed)}")
        if note:
            parts.append(note)
        return "  ".join(parts)

    def _draw(self, text: str) -> None:
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self._draw(self.line())
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


class Ticker(Progress):
    """The elapsed time of a phase that reports no steps (training the run's tagger: a minute or two on GUM),
    redrawn every ``every`` seconds by a thread from :meth:`begin` to :meth:`close`, so the line shows the
    command is alive. Silent when the stream is not a terminal, like every progress line."""

    def __init__(self, label: str, stream: IO[str] | None = None, enabled: bool | None = None,
                 every: float = 1.0) -> None:
        super().__init__(label, None, "", stream, enabled)
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def begin(self) -> Ticker:
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._tick, name=f"progress: {self.label}", daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._draw(self.line())

    def line(self, now: float | None = None, note: str = "") -> str:
        elapsed = (time.monotonic() if now is None else now) - self.start
        return f"{self.label}: elapsed {_clock(elapsed)}" + (f"  {note}" if note else "")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        super().close()


class TrainingProgress(Progress):
    """Labels finished out of the total, and what the labels in flight are doing.

    Done means finished to the run's stop rule, as ``count()`` reads it from the database: labels a resumed
    run finds finished count from the start (not in the rate), paused ones only once this run finishes them.
    With one process, ``count`` is read when :meth:`iteration` sees a new label (the previous one ended);
    with several, :meth:`poll` is given the count.
    """

    def __init__(self, labels: int, stream: IO[str] | None = None, enabled: bool | None = None,
                 count: Callable[[], int] | None = None) -> None:
        super().__init__("training", labels, "labels", stream, enabled)
        self._current: str | None = None
        self._count = count
        if count is not None and self.enabled:  # no database reads for a log that shows no progress
            self.done = self.initial = count()
        # The state the run starts from, drawn at once: a label that finishes before the first redraw
        # must not hide that a resumed run started with some labels left.
        self.update(0, "starting")

    def iteration(self, label: str, iteration: int, theta: float) -> None:
        if label != self._current:
            if self._count is not None:
                if self.enabled:
                    self.done = self._count()
            elif self._current is not None:
                self.done += 1
            self._current = label
        self.update(0, f"{label} iteration {iteration}, Θ {theta:.4g}")

    def poll(self, finished: int, running: dict[str, tuple[int, float | None]]) -> None:
        """``finished`` labels done; ``running``: label -> (iteration, Θ) of those training now."""
        self.done = finished
        note = "  ".join(f"{label} {it}/Θ {theta:.3g}" if theta is not None else f"{label} starting"
                         for label, (it, theta) in running.items())
        self.update(0, note)

    def finish(self, finished: int | None = None) -> None:
        """The run is over: ``finished`` labels are done (default: ``count()``; the rest paused, failed or
        were left alone)."""
        if finished is None and self._count is not None and self.enabled:
            finished = self._count()
        if finished is not None:
            self.done = finished
        self.update(0)
        self.close()
