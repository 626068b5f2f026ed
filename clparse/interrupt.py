"""Ctrl-C and SIGTERM as a request to stop at the next safe point, for every long command.

Training checks the flag between iterations (the one in flight is committed first), calibration
between sentences (an unfinished Θ̂ is parsed again on resume). The CLI and the training worker
processes use the same class; the CLI adds a message and lets a second Ctrl-C give up waiting.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable


class StopRequest:
    """A flag set by SIGINT or SIGTERM once :meth:`install` ran; call the object to read it."""

    def __init__(self, on_request: Callable[[], object] | None = None,
                 second_interrupt_raises: bool = False) -> None:
        self.requested = False
        self.on_request = on_request
        self.second_interrupt_raises = second_interrupt_raises

    def __call__(self) -> bool:
        return self.requested

    def handle(self, signum: int, _frame: object) -> None:
        if self.requested and self.second_interrupt_raises and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop waiting (what is committed stays intact)
        first = not self.requested
        self.requested = True
        if first and self.on_request is not None:
            self.on_request()

    def install(self) -> StopRequest:
        signal.signal(signal.SIGINT, self.handle)
        signal.signal(signal.SIGTERM, self.handle)
        return self


def die_with_parent(parent: int) -> None:
    """SIGTERM this process when the parent dies (Linux); exit now if it is already gone.

    For worker processes (training, parallel parsing): they never outlive the command that started them.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: only the check below protects the start
        pass
    if os.getppid() != parent:  # the parent died before the signal was set: reparented already
        sys.exit(0)
