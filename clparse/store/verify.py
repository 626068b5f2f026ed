"""Checksums of stored trees and blobs: how a tree's is computed, and every row that fails its own.

Each boosting iteration stores the SHA-256 of its tree (:func:`tree_checksum`: the iteration's Θ and
every ``tree_nodes`` row in node order, in a fixed little-endian packing), written in the same
transaction as the rows (``TrainingStore.commit``); each blob row stores the SHA-256 of its key and
blobs (``clparse.store.blobs.checksum``), written where the row is. Loading a model or replaying
trees verifies the trees it loads (``Models.trees``), reading examples verifies the blobs it decodes
(``Runs``, ``TrainingStore``), and ``clparse check`` verifies everything (:func:`verify_checksums`).
The stored CRF tagger carries its own SHA-256 in its header, checked here too.

Revision 0008 added the checksum columns and filled them in from what older databases held.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clparse.errors import DatabaseError
from clparse.store import blobs
from clparse.store.chooser_rows import WEIGHT_NAMES, chooser_weights
from clparse.store.database import DAMAGED, Database, check_database

if TYPE_CHECKING:  # SQLAlchemy is imported where it is used: loading a parser verifies trees without it
    import sqlalchemy as sa

#: The ``tree_nodes`` columns a tree's checksum covers, in this order: 8 integers, then 5 floats.
NODE_COLUMNS = ("node", "parent", "depth", "feature_id", "true_child", "false_child", "examples",
                "candidates", "gain", "best_gain", "w_positive", "w_negative", "confidence")
_INTS = 8
#: The schema revision that added the checksums.
CHECKSUMS_SINCE = "0008"
#: The schema revision that gave tag choosers their aggregator column (0010 added the table).
TAG_CHOOSER_AGGREGATOR_SINCE = "0011"
#: The aggregators a chooser can be fitted with (search.aggregate.AGGREGATORS; a test keeps them equal).
CHOOSER_AGGREGATORS = ("maxmin", "sum")
_HEAD = struct.Struct("<qqd")  # label_id, iteration, theta
_NODE = struct.Struct("<H8q5d")  # null mask, the integers, the floats


def _node_bytes(values: Sequence[Any]) -> bytes:
    """One node's packing. Only parent, feature_id, true_child, false_child, gain and confidence can be
    NULL (the others are NOT NULL columns). SQLite stores a NaN as NULL and gives -0.0 back as 0.0 (a
    REAL without fraction is stored as an integer): both are packed as what is read back. Unrolled: this
    runs for every node a model loads."""
    node, parent, depth, feature, true_child, false_child, examples, candidates, gain, best_gain, \
        w_positive, w_negative, confidence = values
    mask = 0
    if parent is None:
        mask, parent = mask | 2, 0
    if feature is None:
        mask, feature = mask | 8, 0
    if true_child is None:
        mask, true_child = mask | 16, 0
    if false_child is None:
        mask, false_child = mask | 32, 0
    if gain is None or gain != gain:
        mask, gain = mask | 256, 0.0
    if confidence is None or confidence != confidence:
        mask, confidence = mask | 4096, 0.0
    return _NODE.pack(mask, int(node), int(parent), int(depth), int(feature), int(true_child),
                      int(false_child), int(examples), int(candidates), float(gain) + 0.0,
                      float(best_gain) + 0.0, float(w_positive) + 0.0, float(w_negative) + 0.0,
                      float(confidence) + 0.0)


def tree_checksum(label_id: int, iteration: int, theta: float, nodes: Iterable[Sequence[Any]]) -> str:
    """SHA-256 (hex) of a tree: ``label_id``, ``iteration`` (int64) and ``theta`` (float64), then per node
    in node order its :data:`NODE_COLUMNS` values after a uint16 mask of those that are NULL (packed as
    0), integers as int64 and floats as float64, all little-endian.

    ``nodes`` are value sequences in :data:`NODE_COLUMNS` order, sorted by node."""
    h = hashlib.sha256(_HEAD.pack(int(label_id), int(iteration), float(theta) + 0.0))
    for node in nodes:
        h.update(_node_bytes(node))
    return h.hexdigest()


def node_values(node: Mapping[str, Any]) -> tuple[Any, ...]:
    """A node row's values (by column name) in :data:`NODE_COLUMNS` order."""
    return tuple(node[c] for c in NODE_COLUMNS)


@dataclass(frozen=True)
class Problem:
    """A stored row that fails its checksum: its table and a readable name of the row."""

    table: str
    row: str  # e.g. "iteration 12 of NP", "feature_rows chunk 3"
    why: str = "fails its checksum"

    def __str__(self) -> str:
        return f"{self.row} {self.why}"


def damaged(path: str | Path, problems: Sequence[Problem]) -> DatabaseError:
    """One line naming the first problem (and how many more) and what to do."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return DatabaseError(f"{path}: {problems[0]}{more}; {DAMAGED}")


def _label_names(connection: sa.Connection) -> dict[int, str]:
    import sqlalchemy as sa

    from clparse.store import schema

    lb = schema.labels
    return {int(i): str(n) for i, n in connection.execute(sa.select(lb.c.id, lb.c.name))}


def load_trees(connection: sa.Connection, label: int | str, name: str, after: int = 0,
               up_to: int | None = None) -> tuple[list[list[tuple[Any, ...]]], list[Problem]]:
    """(the trees after+1..up_to of a label (its id, or its name), each as its node rows'
    :data:`NODE_COLUMNS` values in node order; the iterations among them whose tree fails its checksum,
    and node rows without an iteration row). ``name`` names the label in problems."""
    import sqlalchemy as sa

    from clparse.store import schema

    lb, it, tn = schema.labels, schema.iterations, schema.tree_nodes
    label_id = label if isinstance(label, int) else \
        sa.select(lb.c.id).where(lb.c.name == label).scalar_subquery()
    nodes_query = sa.select(tn.c.iteration, *(tn.c[c] for c in NODE_COLUMNS)).where(
        tn.c.label_id == label_id, tn.c.iteration > after)
    rows_query = sa.select(it.c.label_id, it.c.iteration, it.c.theta, it.c.sha256).where(
        it.c.label_id == label_id, it.c.iteration > after)
    if up_to is not None:
        nodes_query = nodes_query.where(tn.c.iteration <= up_to)
        rows_query = rows_query.where(it.c.iteration <= up_to)
    nodes: dict[int, list[tuple[Any, ...]]] = {}
    for iteration, *values in connection.execute(nodes_query.order_by(tn.c.iteration, tn.c.node)):
        nodes.setdefault(int(iteration), []).append(tuple(values))
    return checked_trees(name, nodes, connection.execute(rows_query.order_by(it.c.iteration)))


def checked_trees(name: str, nodes: dict[int, list[tuple[Any, ...]]],
                  rows: Iterable[Sequence[Any]]) -> tuple[list[list[tuple[Any, ...]]], list[Problem]]:
    """:func:`load_trees` once read: ``nodes`` (iteration -> its node rows' :data:`NODE_COLUMNS` values in
    node order; emptied here) and the iteration rows (label id, iteration, Θ, stored checksum) in
    iteration order."""
    trees, problems = [], []
    for stored_label, iteration, theta, stored in rows:
        tree = nodes.pop(int(iteration), [])
        if stored != tree_checksum(stored_label, iteration, theta, tree):
            problems.append(Problem("iterations", f"iteration {iteration} of {name}"))
        trees.append(tree)
    problems += [Problem("tree_nodes", f"the tree_nodes of iteration {i} of {name} (no iteration row)")
                 for i in sorted(nodes)]
    return trees, problems


def tree_problems(connection: sa.Connection, label_id: int, name: str, after: int = 0,
                  up_to: int | None = None) -> list[Problem]:
    """The iterations after+1..up_to of a label whose tree fails its checksum (node rows without an
    iteration row too)."""
    return load_trees(connection, label_id, name, after, up_to)[1]


#: How a blob row is named in a message, from its values.
_ROW_NAMES = {
    "feature_rows": lambda row, names: f"feature_rows chunk {row['chunk']}",
    "label_examples": lambda row, names: f"label_examples chunk {row['chunk']} of {names[row['label_id']]}",
    "margin_checkpoints": lambda row, names: (f"the margin checkpoint of iteration {row['iteration']} of "
                                              f"{names[row['label_id']]} (margin_checkpoints)"),
    "label_training": lambda row, names: (f"the stored margins of {names[row['label_id']]} "
                                          "(label_training)"),
}


def row_name(table: str, row: Mapping[Any, Any], names: Mapping[int, str]) -> str:
    """How a row of a checksummed blob table is named in messages (``names``: label id -> name)."""
    return str(_ROW_NAMES[table](row, names))


def blob_problems(connection: sa.Connection, table: str, names: Mapping[int, str],
                  label_id: int | None = None) -> Iterator[Problem]:
    """The rows of a checksummed blob table (of one label, if given) that fail their checksum; streamed
    one row at a time (a feature_rows chunk is ~30 MB)."""
    import sqlalchemy as sa

    from clparse.store import schema

    t = schema.metadata.tables[table]
    columns = [t.c[c] for c in (*blobs.CHECKSUMMED[table], blobs.CHECKSUM_COLUMN[table])]
    keys = list(t.primary_key.columns)
    query = sa.select(*keys)
    if label_id is not None:
        query = query.where(t.c.label_id == label_id)
    for key in connection.execute(query.order_by(*keys)).all():
        row = connection.execute(sa.select(*columns).where(*(k == v for k, v in zip(keys, key)))
                                 ).mappings().one()
        if row[blobs.CHECKSUM_COLUMN[table]] != blobs.row_checksum(table, row):
            yield Problem(table, row_name(table, row, names))


#: The CRF tagger's header (clparse.tag.crf): magic (16 bytes), format and feature-set versions
#: (uint16 each), the SHA-256 of the model bytes that follow it.
_TAGGER_HEADER = struct.Struct("<16sHH32s")


def tagger_problems(connection: sa.Connection) -> list[Problem]:
    """The stored CRF tagger, if its bytes fail the SHA-256 in their header."""
    import sqlalchemy as sa

    from clparse.store import schema

    tg = schema.taggers
    problems = []
    for run_id, blob in connection.execute(sa.select(tg.c.run_id, tg.c.model_blob)
                                           .where(tg.c.model_blob.is_not(None))):
        blob = bytes(blob)
        size = _TAGGER_HEADER.size
        if len(blob) < size or hashlib.sha256(blob[size:]).digest() != _TAGGER_HEADER.unpack(blob[:size])[3]:
            problems.append(Problem("taggers", f"the tagger's model_blob (taggers, run {run_id})"))
    return problems


#: The tagger net's header (clparse.tag.net): magic (16 bytes), format, reserved (uint16 each), the SHA-256
#: of what follows it, the length of its JSON header (uint32).
_NET_HEADER = struct.Struct("<16sHH32sI")
#: The schema revision that added the tagger net (and tag_choosers.tagger).
TAGGER_NETS_SINCE = "0012"


def tagger_net_problems(connection: sa.Connection) -> list[Problem]:
    """The stored tagger net, if its bytes fail the SHA-256 in their header."""
    import sqlalchemy as sa

    from clparse.store import schema

    tn = schema.tagger_nets
    problems = []
    for run_id, blob in connection.execute(sa.select(tn.c.run_id, tn.c.model_blob)):
        blob = bytes(blob)
        size = _NET_HEADER.size
        if len(blob) < size or hashlib.sha256(blob[size:]).digest() != _NET_HEADER.unpack(blob[:size])[3]:
            problems.append(Problem("tagger_nets", f"the tagger net's model_blob (run {run_id})"))
    return problems


def tag_chooser_problems(connection: sa.Connection) -> list[Problem]:
    """Stored tag choosers that are not a chooser: weights that are not the four named finite numbers, or
    an aggregator the search does not have. ``parse`` refuses such a row only when it would use it (the
    latest at its Θ̂ and aggregator); a check finds it before."""
    import sqlalchemy as sa

    from clparse.store import schema

    tc = schema.tag_choosers
    problems = []
    for chooser_id, weights_json, aggregator in connection.execute(
            sa.select(tc.c.id, tc.c.weights_json, tc.c.aggregator).order_by(tc.c.id)):
        if chooser_weights(weights_json) is None:
            problems.append(Problem("tag_choosers", f"tag chooser {chooser_id}",
                                    f"is damaged (its weights_json is not the weights of "
                                    f"{', '.join(WEIGHT_NAMES)})"))
        elif aggregator not in CHOOSER_AGGREGATORS:
            problems.append(Problem("tag_choosers", f"tag chooser {chooser_id}",
                                    f"is damaged (aggregator {aggregator!r}, not one of "
                                    f"{', '.join(CHOOSER_AGGREGATORS)})"))
    return problems


def verify_checksums(db: Database | str | Path) -> list[Problem]:
    """Every stored tree and blob row whose checksum does not match what it holds, in table order:
    iterations (per label by name, then iteration), feature_rows, label_examples, margin_checkpoints,
    label_training, taggers, tagger_nets; then tag choosers that are not one (:func:`tag_chooser_problems`).
    Empty: everything is as it was written (or the schema is older than revision 0008, which stores no
    checksums: ``clparse init`` upgrades it and computes them)."""
    revision = db.revision if isinstance(db, Database) else \
        check_database(db, upgrade=False, allow_older=True)
    if revision < CHECKSUMS_SINCE:
        return []
    # an older schema since checksums (the .bak an upgrade leaves) holds these tables as they are now
    database = Database.of(db, readonly=True, allow_older=True)
    problems: list[Problem] = []
    with database.snapshot() as connection:  # one snapshot: a trainer may commit while this reads
        names = _label_names(connection)
        for label_id, name in sorted(names.items(), key=lambda item: item[1]):
            problems += tree_problems(connection, label_id, name)
        for table in ("feature_rows", "label_examples", "margin_checkpoints", "label_training"):
            problems += blob_problems(connection, table, names)
        problems += tagger_problems(connection)
        if revision >= TAGGER_NETS_SINCE:
            problems += tagger_net_problems(connection)
        if revision >= TAG_CHOOSER_AGGREGATOR_SINCE:  # the table, and its aggregator column
            problems += tag_chooser_problems(connection)
    return problems


def verify_label(db: Database, label_id: int, after: int) -> None:
    """Refuse (:class:`DatabaseError`) a label whose training input is damaged: the shared feature rows, its
    examples, its stored margins and its trees after ``after`` (those a resume replays)."""
    with db.snapshot() as connection:  # one snapshot: another trainer may commit while this reads
        names = _label_names(connection)
        problems = [*blob_problems(connection, "feature_rows", names),
                    *blob_problems(connection, "label_examples", names, label_id),
                    *blob_problems(connection, "label_training", names, label_id),
                    *tree_problems(connection, label_id, names[label_id], after)]
    if problems:
        raise damaged(db.path, problems)
