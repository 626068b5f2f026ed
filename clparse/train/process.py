"""Is a recorded trainer process still running? Light on purpose: ``clparse status`` imports it."""

from __future__ import annotations

import os
import re
import socket
from datetime import datetime
from pathlib import Path

WORKER_NOTE = ", on dask worker "


def claim_note(worker: str | None = None) -> str:
    """What a trainer writes into its label's ``message`` when it claims it: host and pid, and for
    ``--dask`` the worker that computes the label (the host and pid are the coordinator's, which
    commits)."""
    note = f"training on {socket.gethostname()} as pid {os.getpid()}"
    return note if worker is None else f"{note}{WORKER_NOTE}{worker}"


def claim_worker(message: str | None) -> str | None:
    """The dask worker named in a claim note, if any."""
    match = re.fullmatch(r"training on \S+ as pid \d+" + re.escape(WORKER_NOTE) + r"(\S+)", message or "")
    return match.group(1) if match else None


def _claim_host(message: str | None) -> str | None:
    match = re.fullmatch(r"training on (\S+) as pid \d+(?:" + re.escape(WORKER_NOTE) + r"\S+)?",
                         message or "")
    return match.group(1) if match else None


def pid_alive(pid: int | None) -> bool:
    """Is some process with this id running? (It may not be the one that recorded the id.)"""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (Unix time), from /proc; None where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22; the name in (...) may hold spaces
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def trainer_alive(pid: int | None, since: str | None, message: str | None = None) -> bool:
    """Is the trainer that recorded ``pid`` at time ``since`` (ISO stamp, whole seconds) still running?

    A pid alone is not enough: after a reboot or in a container the number is reused by unrelated
    processes. The trainer started before it wrote ``since``, so a live process with that pid that
    started later is another process, and the trainer is dead. (Stamps are whole seconds: 1 s slack.)
    A claim written on another host (``message`` from :func:`claim_note`) cannot be checked from
    here: it is taken as alive, the safe side.
    """
    host = _claim_host(message)
    if host is not None and host != socket.gethostname():
        return pid is not None
    if not pid_alive(pid):
        return False
    assert pid is not None
    started = process_started(pid)
    if started is None or since is None:
        return True  # cannot tell: assume the claim holds (refusing is the safe side)
    try:
        stamp = datetime.fromisoformat(since).timestamp()
    except ValueError:
        return True
    return started <= stamp + 1.0
