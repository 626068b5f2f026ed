"""Reading calibration results: the best Θ̂ and the table of points."""

from __future__ import annotations

from pathlib import Path

from clparse.errors import ConfigurationError
from clparse.store.calibration import Calibrations
from clparse.store.database import Database


def best_theta(db: Database | str | Path) -> float | dict[str, float]:
    """The best Θ̂ of the most recently updated calibration: per label if it was calibrated per label."""
    from clparse.calibrate.per_label import per_label_thetas

    database = Database.of(db, readonly=True)
    found = Calibrations(database).latest_best()
    if found is None:
        raise ConfigurationError(f"{database.path}: not calibrated yet; run `clparse calibrate --db "
                                 f"{database.path}` or give --theta X")
    per_label = per_label_thetas(database, found[0])
    return per_label if per_label is not None else found[1]
