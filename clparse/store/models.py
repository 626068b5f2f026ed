"""What a parser at Θ̂ is made of, read from the training state: which trees each label keeps, the
trees themselves as node rows, and the Θ values stored (for calibration grids).

Every tree loaded is verified against the checksum stored with its iteration
(``clparse.store.verify.tree_checksum``), and so is the first tree a label does not keep at Θ̂ (its Θ
decides where the kept trees end): a damaged tree is refused with one line naming label and
iteration, never parsed with.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from clparse.store import reading, schema
from clparse.store.database import Database
from clparse.store.verify import NODE_COLUMNS, damaged, load_trees

NodeRow = tuple[Any, Any, Any, Any]  # (feature id or None, true child, false child, confidence)


class Models:
    def __init__(self, db: Database | str | Path, *, readonly: bool = True) -> None:
        self.db = Database.of(db, readonly=readonly)

    def trees_at(self, thetas: Mapping[str, float]) -> tuple[dict[str, int], dict[str, str]]:
        """(label -> trees t with Θ^t >= Θ̂_label, label -> why it is not calibrated at its Θ̂).

        A label is calibrated at Θ̂ once its training went below Θ̂ (a later tree is stored) or it
        converged. Labels missing from ``thetas`` are left out. The trees whose Θ puts them on the wrong
        side of Θ̂ for their place (Θ never rises from one iteration to the next) and the first tree
        left out are verified against their checksums: a damaged Θ cannot move the cut unseen (the
        trees kept are verified when :meth:`trees` loads them)."""
        with self.db.raw() as connection:
            counts, missing, _ = reading.trees_at(connection, self.db.path, thetas)
        return counts, missing

    def theta_range(self) -> tuple[float | None, float | None]:
        """(the largest first Θ of any label, the highest Θ a label still in training has reached)."""
        it, lt = schema.iterations, schema.label_training
        with self.db.reading() as connection:
            top = connection.execute(sa.select(sa.func.max(it.c.theta)).where(it.c.iteration == 1)).scalar()
            floor = connection.execute(sa.select(sa.func.max(lt.c.theta))
                                       .where(lt.c.state != "converged")).scalar()
        return top, floor

    def stored_thetas(self) -> tuple[list[float], list[float | None], int]:
        """(every distinct Θ^t stored, the last Θ of each label not converged, labels never trained)."""
        it, lt = schema.iterations, schema.label_training
        with self.db.reading() as connection:
            values = sorted({float(t) for t in connection.execute(sa.select(it.c.theta)).scalars()})
            floors = list(connection.execute(sa.select(lt.c.theta)
                                             .where(lt.c.state != "converged")).scalars())
            unstarted = connection.execute(sa.select(sa.func.count()).select_from(schema.labels).where(
                ~schema.labels.c.id.in_(sa.select(lt.c.label_id)))).scalar_one()
        return values, floors, int(unstarted)

    def trees(self, label: str, up_to: int | None = None, after: int = 0) -> list[list[NodeRow]]:
        """A label's stored trees after+1..up_to, each as node rows in node order (``Forest.from_trees`` takes
        them); every one verified against its iteration's checksum (a damaged one raises a
        :class:`~clparse.errors.DatabaseError` naming label and iteration)."""
        with self.db.reading() as connection:
            trees, problems = load_trees(connection, label, label, after, up_to)
        if problems:
            raise damaged(self.db.path, problems)
        return [[(n[_FEATURE], n[_TRUE], n[_FALSE], n[_CONFIDENCE]) for n in tree] for tree in trees]


_FEATURE, _TRUE, _FALSE, _CONFIDENCE = (NODE_COLUMNS.index(c) for c in
                                        ("feature_id", "true_child", "false_child", "confidence"))
