"""Reading calibration results: the best Θ̂ and the table of points."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from clparse.errors import ConfigurationError
from clparse.store import schema
from clparse.store.database import open_engine


def best_theta(db: str | Path) -> float | dict[str, float]:
    """The best Θ̂ of the most recently updated calibration: per label if it was calibrated per label."""
    from clparse.calibrate.per_label import per_label_thetas

    engine = open_engine(db, readonly=True)
    c = schema.calibrations
    with engine.connect() as connection:
        row = connection.execute(sa.select(c.c.id, c.c.best_theta).where(c.c.best_theta.is_not(None))
                                 .order_by(c.c.updated_at.desc(), c.c.id.desc()).limit(1)).first()
        per_label = None if row is None else per_label_thetas(connection, row[0])
    engine.dispose()
    if row is None:
        raise ConfigurationError(f"{db}: not calibrated yet; run `clparse calibrate --db {db}` or give --theta X")
    return per_label if per_label is not None else float(row[1])
