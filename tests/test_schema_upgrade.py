"""Databases written by older clparse versions upgrade to today's schema with their data intact.

tests/data/old_schemas/ holds one small database per old schema revision (0001 .. 0011), each
made by the clparse code of its time (``make.py`` there rebuilds them from git), and beside each a
JSON record of what that old code said about it: row counts, digests of the stored examples, the
Θ of every boosting iteration, SQL weights and model scores (0002 on), its parser's trees for
the dev sentences at several Θ̂, with gold tags and with the stored tagger (0003 on; a CRF from 0006
on, an averaged perceptron before), and the trials and Θ̂ of a per-label calibration (0005 on).

Each test works on a copy, upgraded by ``clparse init`` (what any writing command does), and reads
it back through today's public surfaces: ``clparse sql`` with its SQL functions, and the Python
``Parser``. Old and new must agree exactly (floats to the bit: scores and weights are replayed from
the stored trees with the same additions).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from tests.conftest import read_rows as rows
from tests.test_schema_autogenerate import schema_differences

OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"
REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011")


def _make_module() -> Any:
    """make.py, for its ``digest`` (the same hashing on both sides); it imports no clparse."""
    spec = importlib.util.spec_from_file_location("old_schemas_make", OLD_SCHEMAS / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


digest = _make_module().digest


def record(revision: str) -> dict[str, Any]:
    return json.loads((OLD_SCHEMAS / f"schema-{revision}.json").read_text(encoding="utf-8"))


def row_counts(db: Path) -> dict[str, int]:
    names = [n for (n,) in rows(db, "SELECT name FROM sqlite_master "
                                    "WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {name: rows(db, f'SELECT count(*) FROM "{name}"')[0][0] for name in names}


def clparse(*args: str) -> str:
    from clparse.cli import main

    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.output


def sql(db: Path, query: str) -> list[dict[str, Any]]:
    """``clparse sql --json``: today's reading of the database, SQL functions included."""
    found = json.loads(clparse("sql", "--db", str(db), "--json", query))
    return found if found and isinstance(found[0], dict) else []


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """revision -> a copy of its old database, upgraded by `clparse init` (each in its own directory)."""
    copies = {}
    for revision in REVISIONS:
        copy = tmp_path_factory.mktemp(f"schema-{revision}") / "old.sqlite"
        shutil.copyfile(OLD_SCHEMAS / f"schema-{revision}.sqlite", copy)
        output = clparse("init", "--db", str(copy))
        assert f"from schema {revision} to " in output, output
        copies[revision] = copy
    return copies


@cache
def feature_rows(db: Path) -> tuple[np.ndarray, np.ndarray]:
    """(indptr int64, indices int32) of every stored feature row, read with ``clparse_row_features``."""
    query = ("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
             "WHERE i + 1 < (SELECT sum(row_count) FROM feature_rows)) "
             "SELECT clparse_row_features(i) AS f FROM n")
    lists = [json.loads(row["f"]) for row in sql(db, query)]
    indptr = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype("<i8")
    indices = np.array([f for x in lists for f in x], dtype="<i4")
    return indptr, indices


# ------------------------------------------------------------------------------------------------


def test_every_old_revision_has_a_database() -> None:
    from clparse.store.database import known_revisions

    assert list(REVISIONS) == known_revisions()[:-1]  # a new migration: run make.py for the new old one
    for revision in REVISIONS:
        assert record(revision)["alembic_version"] == revision
        assert rows(OLD_SCHEMAS / f"schema-{revision}.sqlite", "SELECT version_num FROM alembic_version") == \
            [(revision,)]


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_old_file_is_backed_up_unchanged(upgraded: dict[str, Path], revision: str) -> None:
    db = upgraded[revision]
    backup = db.with_name(f"{db.name}.schema-{revision}.bak")
    assert backup.exists()
    assert rows(backup, "SELECT version_num FROM alembic_version") == [(revision,)]
    assert row_counts(backup) == record(revision)["row_counts"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_rows_survive_and_the_schema_is_today_s(upgraded: dict[str, Path], revision: str) -> None:
    from clparse.store import schema
    from clparse.store.database import known_revisions

    db = upgraded[revision]
    assert rows(db, "SELECT version_num FROM alembic_version") == [(known_revisions()[-1],)]
    assert rows(db, "PRAGMA application_id") == [(schema.APPLICATION_ID,)]
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
    assert rows(db, "PRAGMA foreign_key_check") == []
    counts, before = row_counts(db), record(revision)["row_counts"]
    assert set(counts) == set(schema.metadata.tables) | {"alembic_version"}
    for table, count in counts.items():
        assert count == before.get(table, 0), table  # tables added since are there, empty
    assert schema_differences(db) == []  # an upgraded file has exactly the schema of a new one


@pytest.mark.parametrize("revision", REVISIONS)
def test_sentences_and_examples_read_back(upgraded: dict[str, Path], revision: str) -> None:
    db, old = upgraded[revision], record(revision)
    labels = sql(db, "SELECT name, examples FROM labels ORDER BY name")
    assert [row["name"] for row in labels] == old["labels"]
    assert sql(db, "SELECT count(*) AS n FROM features")[0]["n"] == old["feature_count"]
    indptr, indices = feature_rows(db)
    assert len(indptr) - 1 == old["feature_rows"]["rows"]
    assert digest(indptr, indices) == old["feature_rows"]["digest"]
    for row in labels:
        examples = [json.loads(r["e"]) for r in sql(db, (
            f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
            f"WHERE i + 1 < {row['examples']}) "
            f"SELECT clparse_example('{row['name']}', i) AS e FROM n"))]
        arrays = (np.array([e["row"] for e in examples], dtype="<i4"),
                  np.array([e["y"] for e in examples], dtype="i1"),
                  np.array([e["multiplicity"] for e in examples], dtype="<i4"))
        assert digest(*arrays) == old["label_examples"][row["name"]], row["name"]
    dev = sql(db, "SELECT words, tree FROM sentences WHERE split = 'dev' ORDER BY position")
    assert [(r["words"].split(" "), r["tree"]) for r in dev] == \
        [(s["words"], s["tree"]) for s in old["dev_sentences"]]


@pytest.mark.parametrize("revision", REVISIONS)
def test_columns_added_since_are_empty(upgraded: dict[str, Path], revision: str) -> None:
    """0006: an older tagger row is a perceptron kept as JSON (no blob); no sentence has a jackknife fold.
    0007: every label's stored margins are those of its last iteration, as the old code wrote them."""
    db, old = upgraded[revision], record(revision)
    if revision < "0006":
        taggers = sql(db, "SELECT kind, model_blob IS NULL AS no_blob, model_json IS NOT NULL AS json "
                          "FROM taggers")
        assert taggers == [{"kind": "perceptron", "no_blob": 1, "json": 1}] \
            * old["row_counts"].get("taggers", 0)
    assert sql(db, "SELECT count(*) AS n FROM sentences "
                   "WHERE fold IS NOT NULL OR tags IS NOT NULL") == [{"n": 0}]
    training = sql(db, "SELECT iteration, margins_iteration FROM label_training")
    assert len(training) == old["row_counts"].get("label_training", 0)
    assert all(row["margins_iteration"] == row["iteration"] for row in training)


TRAINED = [r for r in REVISIONS if r >= "0002"]
PARSED = [r for r in REVISIONS if r >= "0003"]


@pytest.mark.parametrize("revision", PARSED)
def test_the_stored_tagger_tags_as_it_did(upgraded: dict[str, Path], revision: str) -> None:
    """The old tagger (a perceptron before 0006, a CRF from 0006 on) loads from its upgraded row and
    gives the tags it gave then: the preterminals of the old parser's trees with the stored tagger
    (the same at every Θ̂)."""
    from clparse.parser import escape
    from clparse.read.ptb import parse_tree
    from clparse.tag.crf import CrfTagger
    from clparse.tag.perceptron import Tagger
    from clparse.tag.stored import load_tagger

    db, old = upgraded[revision], record(revision)
    tagger = load_tagger(db)
    assert isinstance(tagger, CrfTagger if revision >= "0006" else Tagger)
    then = {tuple(tuple(parse_tree(tree).tagged_words()) for tree in point["tagger"])
            for point in old["parses"]}
    assert len(then) == 1
    words = [[escape(w) for w, _ in s["tagged"]] for s in old["dev_sentences"]]
    assert [tuple(zip(w, tagger.tag(w))) for w in words] == list(then.pop())


@pytest.mark.parametrize("revision", TRAINED)
def test_training_state_reads_back(upgraded: dict[str, Path], revision: str) -> None:
    db, old = upgraded[revision], record(revision)
    thetas: dict[str, list[float]] = {}
    for row in sql(db, "SELECT l.name, i.theta FROM iterations i JOIN labels l ON l.id = i.label_id "
                       "ORDER BY l.name, i.iteration"):
        thetas.setdefault(row["name"], []).append(row["theta"])
    assert thetas == {label: values for label, values in old["thetas"].items() if values}
    states = {r["name"]: r["state"] for r in sql(db, "SELECT l.name, t.state FROM label_training t "
                                                      "JOIN labels l ON l.id = t.label_id")}
    assert states == old["states"]
    # The weights that grew a tree, replayed from a margin checkpoint and the stored trees.
    weights = sql(db, old["weights"]["query"])
    assert len(weights) == old["weights"]["rows"]
    assert weights[:3] == old["weights"]["first"]
    assert digest(weights) == old["weights"]["digest"]


@pytest.mark.parametrize("revision", TRAINED)
def test_model_scores_are_the_old_ones(upgraded: dict[str, Path], revision: str) -> None:
    """Today's parser model at Θ̂ scores every stored feature row exactly as the old model did."""
    from clparse.parser import Parser

    db, old = upgraded[revision], record(revision)
    indptr, indices = feature_rows(db)
    for point in old["model_scores"]:
        model = Parser.from_db(db, point["theta"]).model
        assert model.splits == point["splits"]
        for label, expected in point["digest"].items():
            ensemble = model.ensembles[label]
            assert ensemble.trees == point["trees"][label], (point["theta"], label)
            scores = np.asarray(ensemble.score(indptr, indices), dtype="<f8")
            assert [float(x).hex() for x in scores[:5]] == point["first"][label], (point["theta"], label)
            assert digest(scores) == expected, (point["theta"], label)


@pytest.mark.parametrize("revision", PARSED)
def test_parses_are_the_old_ones(upgraded: dict[str, Path], revision: str) -> None:
    from clparse.parser import Parser

    db, old = upgraded[revision], record(revision)
    tagged = [[tuple(token) for token in s["tagged"]] for s in old["dev_sentences"]]
    assert old["parses"][-1]["theta"] == "best"
    # the search's default then: max-min, and the summed loss from 0011 on
    aggregator = "sum" if revision >= "0011" else "maxmin"
    for point in old["parses"]:
        # the best tagging alone, as parsing was then (tag alternatives came later: test_tag_alternatives)
        parser = Parser.from_db(db, point["theta"], beam=point["beam"], tag_alternatives=0,
                                aggregator=aggregator)
        if point["theta"] == "best" and old.get("per_label", {}).get("kept"):  # 0005 on: a Θ̂ per label
            assert parser.model.label_thetas == old["per_label"]["thetas"]
        elif point["theta"] == "best":
            assert parser.model.theta == old["calibration"]["best_theta"]
        assert [str(parser.parse_tagged(s)) for s in tagged] == point["gold_tags"], point["theta"]
        # The stored tagger (a perceptron as JSON before 0006, a CRF from 0006 on) tags the words
        # as it did then.
        assert [str(parser.parse([w for w, _ in s])) for s in tagged] == point["tagger"], point["theta"]
        if "tagger_default" in point:  # 0009 on: parse's default then, other taggings tried (no tag chooser
            # is stored in an upgraded database, so the search's own key still chooses, to the byte)
            default = Parser.from_db(db, point["theta"], beam=point["beam"], aggregator=aggregator)
            assert default.chooser is None
            assert [str(default.parse([w for w, _ in s])) for s in tagged] == point["tagger_default"]


@pytest.mark.parametrize("revision", PARSED)
def test_calibration_reads_back(upgraded: dict[str, Path], revision: str) -> None:
    db, old = upgraded[revision], record(revision)
    assert [r["best_theta"] for r in sql(db, "SELECT best_theta FROM calibrations")] == \
        [old["calibration"]["best_theta"]]
    points = sql(db, "SELECT theta, f1, fallbacks, completions FROM calibration_points ORDER BY theta DESC")
    expected = [{**p, "completions": p["completions"] or 0} for p in old["calibration"]["points"]]
    # Before 0004 nothing was completed greedily at the pop cap: the migration's 0 is the truth.
    assert points == expected
    steps = sql(db, "SELECT label, theta, f1, accepted FROM label_theta_steps ORDER BY calibration_id, step")
    assert steps == old.get("per_label", {}).get("trials", [])  # 0005's per-label trials; none before


def test_a_chooser_fitted_before_0011_is_a_max_min_chooser(tmp_path: Path) -> None:
    """0011 adds ``tag_choosers.aggregator``: a chooser stored by 0010's code was fitted on max-min parses
    (it refused the sum aggregator), so the upgrade marks it maxmin, and parse uses it with max-min only."""
    import apsw

    from clparse.parser import Parser
    from clparse.tag.choice import FEATURES, theta_key

    copy = tmp_path / "old.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0010.sqlite", copy)
    theta = record("0010")["calibration"]["best_theta"]
    weights = {name: 0.5 for name in FEATURES}
    connection = apsw.Connection(str(copy))  # as 0010's code wrote a fit (a row of every column it had)
    connection.execute(
        "INSERT INTO tag_choosers (run_id, theta, beam, max_pops, alternatives, weights_json, sentences, "
        "pairs, f1_best, f1_rule, f1_chooser, f1_two_fold, seconds, clparse_version, created_at) "
        "VALUES (1, ?, 100, 10000, 3, ?, 6, 2, 50.0, 50.0, 50.0, 50.0, 1.0, 'old', "
        "'2026-11-27T00:00:00+00:00')",
        (theta_key(float(theta), None), json.dumps(weights)))
    connection.close()
    clparse("init", "--db", str(copy))
    assert rows(copy, "SELECT aggregator FROM tag_choosers") == [("maxmin",)]
    # and 0012's tagger column: there was no tagger but the CRF to fit it on
    assert rows(copy, "SELECT tagger FROM tag_choosers") == [("crf",)]
    assert rows(copy, "SELECT count(*) FROM tagger_nets") == [(0,)]
    maxmin = Parser.from_db(copy, "best", aggregator="maxmin")
    assert maxmin.chooser is not None and maxmin.chooser.weights == tuple(weights.values())
    summed = Parser.from_db(copy, "best")
    assert summed.chooser is None and "fitted at Θ̂" in str(summed.chooser_note)


@pytest.mark.parametrize("revision", ["0006", "0007", "0008", "0009", "0010", "0011"])
def test_preparing_again_with_the_same_inputs_does_nothing(tmp_path: Path, revision: str) -> None:
    # a template added since (span-edges and punctuation after 0008, coarse-tags after 0011), off, must not
    # make an old run's own inputs look like another run's (0006 on: made with today's default settings)
    from clparse.examples.prepare import PrepareSettings, prepare

    copy = tmp_path / "old.sqlite"
    shutil.copyfile(OLD_SCHEMAS / f"schema-{revision}.sqlite", copy)
    clparse("init", "--db", str(copy))
    train, dev = _make_module().write_subset(tmp_path)
    before = row_counts(copy)
    settings = PrepareSettings(vocab_min=record(revision)["prepare_settings"]["vocab_min"])
    summary = prepare(copy, [train], [dev], settings)
    assert not summary.created, summary.message
    assert row_counts(copy) == before
