"""Entry point of a ``--jobs N`` worker process; imports nothing heavy until its parent is known alive.

A spawned worker starts a fresh interpreter, and importing numpy, numba and SQLAlchemy takes
seconds under load. If the parent died in that window, a parent-death signal set only afterwards
would never come: the orphan would train its whole label. So the signal is set first thing, then
the parent is checked (it may have died before that), and only then is the trainer imported.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def die_with_parent(parent: int) -> None:
    """SIGTERM this process when the parent dies (Linux); exit now if it is already gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: only the check below protects the start
        pass
    if os.getppid() != parent:  # the parent died before the signal was set: reparented already
        sys.exit(0)


def run(parent: int, db: str, label: str, settings: dict[str, Any], rule: tuple[Any, ...],
        results: Any) -> None:
    """One label in this process: stop flags on SIGINT/SIGTERM, the result (or error) on ``results``."""
    from clparse.interrupt import StopRequest

    stop = StopRequest().install()  # before die_with_parent: its SIGTERM means "pause"
    die_with_parent(parent)
    from clparse.boost.booster import BoostSettings
    from clparse.errors import LabelClaimedError
    from clparse.train.label import train_label
    from clparse.train.stopping import StopRule

    try:
        state = train_label(db, label, BoostSettings.from_dict(settings), StopRule(*rule), stop)
        results.put((label, state, None))
    except LabelClaimedError as exc:
        results.put((label, "refused", str(exc)))
    except BaseException as exc:  # reported to the parent; train_label already marked the label failed
        from clparse.store.database import describe

        results.put((label, "failed", describe(exc, db)))
