"""How a worker process ended, in words a user can act on (``parse --jobs`` and ``train --jobs`` say it)."""

from __future__ import annotations

import signal

#: Why a worker most often gets SIGKILL that nobody sent on purpose: said after the signal.
SIGKILL_HINT = ("most often the kernel's out-of-memory killer: fewer --jobs, or fewer other jobs on the "
                "machine, leave each worker more memory")


def worker_exit(code: int | None) -> str:
    """``multiprocessing.Process.exitcode`` in words: a signal by name and number (SIGKILL with its usual
    cause), an exit status, or, for None, a worker that stopped answering."""
    if code is None:
        return "stopped answering"
    if code >= 0:
        return f"exited with status {code}"
    number = -code
    try:
        name = signal.Signals(number).name
    except ValueError:  # a signal number this platform has no name for
        return f"killed by signal {number}"
    said = f"killed by {name} (signal {number})"
    return f"{said}, {SIGKILL_HINT}" if number == signal.SIGKILL else said
