"""Running boosting over a database: stop rules, one label at a time or in parallel, status.

Names are imported on first use, so that a worker process (:mod:`clparse.train.worker`) can start
without loading numpy, numba and SQLAlchemy first.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real names, for type checkers
    from clparse.train.label import train_label
    from clparse.train.parallel import train
    from clparse.train.status import LabelStatus, format_status, label_status
    from clparse.train.stopping import StopRule, default_theta_floor

_WHERE = {"train_label": "label", "train": "parallel", "LabelStatus": "status", "format_status": "status",
          "label_status": "status", "StopRule": "stopping", "default_theta_floor": "stopping"}

__all__ = ["LabelStatus", "StopRule", "default_theta_floor", "format_status", "label_status", "train",
           "train_label"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"clparse.train.{_WHERE[name]}"), name)
