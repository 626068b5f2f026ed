"""Reading calibration results: the best Θ̂ and the table of points."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from clparse.errors import ConfigurationError
from clparse.store import schema
from clparse.store.database import open_engine


def best_theta(db: str | Path) -> float:
    """The best Θ̂ of the most recently updated calibration."""
    engine = open_engine(db, readonly=True)
    c = schema.calibrations
    with engine.connect() as connection:
        value = connection.execute(sa.select(c.c.best_theta).where(c.c.best_theta.is_not(None))
                                   .order_by(c.c.updated_at.desc(), c.c.id.desc()).limit(1)).scalar()
    engine.dispose()
    if value is None:
        raise ConfigurationError(f"{db}: not calibrated yet; run `clparse calibrate --db {db}` or give --theta X")
    return float(value)
