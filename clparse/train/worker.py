"""Entry point of a ``--jobs N`` worker process; imports nothing heavy until its parent is known alive.

A spawned worker starts a fresh interpreter, and importing numpy, numba and SQLAlchemy takes
seconds under load. If the parent died in that window, a parent-death signal set only afterwards
would never come: the orphan would train its whole label. So the signal is set first thing, then
the parent is checked (it may have died before that), and only then is the trainer imported.
"""

from __future__ import annotations

from typing import Any

from clparse.interrupt import die_with_parent


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
