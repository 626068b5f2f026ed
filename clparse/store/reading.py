"""The reads that rebuild a parser at Θ̂, in plain SQL on one APSW connection (:meth:`Database.raw`).

Loading a parser is what every ``clparse parse`` waits for before its first tree, so these reads do
without SQLAlchemy (importing it costs more than all of them) and share one read transaction (one
snapshot). The trees of every label come in one statement, verified against their checksums as
:func:`~clparse.store.verify.load_trees` verifies them. :class:`~clparse.store.runs.Runs` and
:class:`~clparse.store.models.Models` answer the same questions through these functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import apsw

from clparse.errors import DatabaseError
from clparse.store.net_header import DIGEST_SPAN
from clparse.store.verify import NODE_COLUMNS, Problem, checked_trees, damaged

#: Every table a parser is rebuilt from (a run's, a combination's, their calibrations and tagger): the
#: tables whose damage could change a parse (:func:`clparse.store.database.quick_check` checks them). The
#: training examples, gigabytes no parse reads, are left to `clparse check`; a test parses with SQLite's
#: authorizer watching, so a new read outside this list fails it.
PARSER_TABLES = ("alembic_version", "runs", "labels", "label_training", "iterations", "tree_nodes",
                 "features", "vocabulary", "taggers", "calibrations", "calibration_points",
                 "calibration_labels", "label_theta_steps", "combinations", "combination_members",
                 "tag_choosers", "tagger_nets")
#: What that damage check walks: every table a parser reads but ``label_training``, whose rows carry each
#: label's margin vector (450 MB of a 6 GB run: 4 s of a cold disk) in a column parsing never reads; the
#: few pages of it that parsing does read, SQLite checks as it reads them.
CHECKED_TABLES = tuple(table for table in PARSER_TABLES if table != "label_training")

FeatureKey = tuple[str, str, str, str]  # (template, item, property, value)
NodeRow = tuple[Any, Any, Any, Any]  # (feature id or None, true child, false child, confidence)


def run(connection: apsw.Connection, path: Path) -> tuple[int, dict[str, Any]]:
    """(run id, config) of the prepared run; refused if there is none."""
    row = connection.execute("SELECT id, config_json FROM runs").fetchone()
    if row is None:
        combined = combination_error(connection, path)
        if combined is not None:  # "run `clparse prepare`" is no advice for a combination
            raise combined
        raise DatabaseError(f"{path}: no prepared run; run `clparse prepare --db {path} ...` first")
    return int(row[0]), json.loads(str(row[1]))


def is_combination(connection: apsw.Connection) -> bool:
    """Does the database hold a combination and no run (a database of ``clparse combine``)?"""
    combined = connection.execute("SELECT 1 FROM combinations LIMIT 1").fetchone() is not None
    return combined and connection.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is None


def combination_error(connection: apsw.Connection, path: str | Path) -> DatabaseError | None:
    """For a database of ``clparse combine`` (a combination and no run): one line saying so, that ``parse``
    is what takes it, and which databases (its latest combination's members) the command takes instead."""
    if not is_combination(connection):
        return None
    members = [f"{source}" + ("" if theta in (None, "best") else f"@{theta}") for source, theta in
               connection.execute("SELECT source, theta FROM combination_members WHERE combination_id = "
                                  "(SELECT max(id) FROM combinations) ORDER BY position")]
    return DatabaseError(f"{path}: a combination of parsers (clparse combine), without a training run, "
                         f"trees or calibrations of its own: `clparse parse --db {path}` parses with it; "
                         f"give one of its members' databases instead: {', '.join(members)}")


def tag_chooser(connection: apsw.Connection, theta_key: str, aggregator: str,
                tagger: str) -> tuple[int, str] | None:
    """(id, weights_json) of the latest tag chooser fitted at Θ̂ ``theta_key`` on parses of ``aggregator``
    from ``tagger``'s taggings (:func:`tagger_name`), or None."""
    row = connection.execute("SELECT id, weights_json FROM tag_choosers WHERE theta = ? AND aggregator = ? "
                             "AND tagger = ? ORDER BY id DESC LIMIT 1",
                             (theta_key, aggregator, tagger)).fetchone()
    if row is None:
        return None
    return int(row[0]), str(row[1])  # type: ignore[arg-type]


def tagger_kinds(connection: apsw.Connection) -> list[str]:
    """The kind of each stored tagger (crf or perceptron), from a database of any schema: before revision
    0006 there was no kind column, and every stored tagger was a perceptron; before 0003, none."""
    try:
        return [str(kind) for (kind,) in connection.execute("SELECT kind FROM taggers")]
    except apsw.SQLError:
        pass
    try:
        return ["perceptron" for _ in connection.execute("SELECT 1 FROM taggers")]
    except apsw.SQLError:  # before revision 0003: no stored tagger at all
        return []


def has_dev(connection: apsw.Connection) -> bool:
    """Does the run have a stored dev split?"""
    row = connection.execute("SELECT EXISTS (SELECT 1 FROM sentences WHERE split = 'dev')").fetchone()
    return bool(row and row[0])


def tag_chooser_fits(connection: apsw.Connection) -> list[str]:
    """The Θ̂, aggregator and tagger of every stored tag chooser (``5 (sum, crf)``), oldest first, each
    once."""
    return [f"{theta} ({aggregator}, {tagger})" for theta, aggregator, tagger in connection.execute(
        "SELECT theta, aggregator, tagger FROM tag_choosers GROUP BY theta, aggregator, tagger "
        "ORDER BY min(id)")]


def tagger_name(connection: apsw.Connection) -> str:
    """Which tagger tags untagged input (what a tag chooser records it was fitted with): ``crf``, or with a
    tagger net stored beside the CRF (``clparse train-tagger``) ``crf+net:`` and the first 16 hex digits of
    the net's SHA-256, read from its header (:data:`clparse.store.net_header.DIGEST_SPAN`), so a chooser
    fitted on another net is not used."""
    start, length = DIGEST_SPAN
    row = connection.execute("SELECT lower(hex(substr(model_blob, ?, ?))) FROM tagger_nets",
                             (start + 1, length)).fetchone()  # substr counts from 1
    return "crf" if row is None else f"crf+net:{str(row[0])[:16]}"


def labels(connection: apsw.Connection) -> list[str]:
    """The run's labels, by name."""
    return [str(name) for name, in connection.execute("SELECT name FROM labels ORDER BY name")]


def vocabulary(connection: apsw.Connection) -> list[tuple[str, int]]:
    """(word, count) of every vocabulary row."""
    return [(str(w), int(c)) for w, c in connection.execute("SELECT word, count FROM vocabulary")]  # type: ignore[arg-type]


def feature_ids(connection: apsw.Connection, ids: Iterable[int] | None = None) -> dict[FeatureKey, int]:
    """Feature key -> id of every stored feature, or of those with the given ``ids`` only."""
    query = "SELECT id, template, item, property, value FROM features"
    if ids is None:
        rows = connection.execute(query)
    else:
        rows = connection.execute(f"{query} WHERE id IN (SELECT value FROM json_each(?))",
                                  (json.dumps(sorted(int(i) for i in ids)),))
    return {(t, i, p, v): int(fid) for fid, t, i, p, v in rows}  # type: ignore[misc]


def feature_values(connection: apsw.Connection, prop: str) -> set[str]:
    """Every value features test of property ``prop`` (e.g. the POS tags of ``headtag``)."""
    return {str(v) for v, in connection.execute("SELECT DISTINCT value FROM features WHERE property = ?",
                                                (prop,))}


#: One statement for the node rows of any set of (label id, first iteration, last iteration) ranges.
_NODES = (f"SELECT tn.label_id, tn.iteration, {', '.join(f'tn.{c}' for c in NODE_COLUMNS)} "
          "FROM json_each(?) AS w JOIN tree_nodes AS tn ON tn.label_id = json_extract(w.value, '$[0]') "
          "AND tn.iteration BETWEEN json_extract(w.value, '$[1]') AND json_extract(w.value, '$[2]') "
          "ORDER BY tn.label_id, tn.iteration, tn.node")
_FEATURE, _TRUE, _FALSE, _CONFIDENCE = (NODE_COLUMNS.index(c) for c in
                                        ("feature_id", "true_child", "false_child", "confidence"))


def trees_at(connection: apsw.Connection, path: Path, thetas: Mapping[str, float], *,
             load: bool = False) -> tuple[dict[str, int], dict[str, str], dict[str, list[list[NodeRow]]]]:
    """(label -> trees t with Θ^t >= Θ̂_label, label -> why it is not calibrated at its Θ̂, and with
    ``load`` label -> those trees 1..t as node rows, ``Forest.from_trees`` takes them).

    A label is calibrated at Θ̂ once its training went below Θ̂ (a later tree is stored) or it
    converged. Labels missing from ``thetas`` are left out. The trees whose Θ puts them on the wrong
    side of Θ̂ for their place (Θ never rises from one iteration to the next) and the first tree
    left out are verified against their checksums, so a damaged Θ cannot move the cut unseen; so is
    every tree loaded (a damaged one raises :class:`~clparse.errors.DatabaseError` naming label and
    iteration; when labels are not calibrated, the trees are not loaded and the caller says so)."""
    rows = connection.execute("SELECT lb.id, lb.name, lt.state, lt.iteration, lt.theta FROM labels AS lb "
                              "LEFT OUTER JOIN label_training AS lt ON lt.label_id = lb.id "
                              "ORDER BY lb.name").fetchall()
    stored: dict[int, list[tuple[Any, ...]]] = {}
    for row in connection.execute("SELECT label_id, iteration, theta, sha256 FROM iterations "
                                  "ORDER BY label_id, iteration"):
        stored.setdefault(int(row[0]), []).append(tuple(row))  # type: ignore[arg-type]
    counts: dict[str, int] = {}
    missing: dict[str, str] = {}
    checks: list[tuple[int, str, list[int]]] = []  # (label id, name, iterations verified: the cut, odd ones)
    for label_id, name, state, iteration, last_theta in rows:
        if name not in thetas:
            continue
        if state is None:
            missing[str(name)] = "never trained"
            continue
        kept_iterations = [int(r[1]) for r in stored.get(int(label_id), []) if r[2] >= thetas[str(name)]]  # type: ignore[arg-type]
        kept = len(kept_iterations)
        odd = sorted(set(kept_iterations) - set(range(1, kept + 1)))
        checks.append((int(label_id), str(name), [kept + 1, *odd]))  # type: ignore[arg-type]
        if not (kept < (iteration or 0) or state == "converged"):  # type: ignore[operator]
            missing[str(name)] = f"trained only down to Θ = {last_theta:.6g}" if last_theta is not None \
                else "no iteration yet"
        counts[str(name)] = kept
    load = load and not missing
    ids = {name: label_id for label_id, name, _ in checks}
    ranges = {(label_id, i, i) for label_id, _, checked in checks for i in checked}
    if load:
        ranges |= {(ids[name], 1, count) for name, count in counts.items() if count}
    nodes: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    if ranges:
        for label_id, iteration, *values in connection.execute(_NODES, (json.dumps(sorted(ranges)),)):
            nodes.setdefault((label_id, iteration), []).append(tuple(values))  # type: ignore[arg-type]

    def verified(label_id: int, name: str, first: int, last: int) -> tuple[list[list[tuple[Any, ...]]],
                                                                            list[Problem]]:
        span = range(first, last + 1)
        return checked_trees(name, {i: list(nodes[label_id, i]) for i in span if (label_id, i) in nodes},
                             (r for r in stored.get(label_id, []) if r[1] in span))

    for label_id, name, checked in checks:
        problems = [p for i in checked for p in verified(label_id, name, i, i)[1]]
        if problems:
            raise damaged(path, problems)
    trees: dict[str, list[list[NodeRow]]] = {}
    if load:
        for name, count in counts.items():
            found, problems = verified(ids[name], name, 1, count) if count else ([], [])
            if problems:
                raise damaged(path, problems)
            trees[name] = [[(n[_FEATURE], n[_TRUE], n[_FALSE], n[_CONFIDENCE]) for n in tree]
                           for tree in found]
    return counts, missing, trees
