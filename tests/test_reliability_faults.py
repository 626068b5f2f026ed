"""Faults found by fault injection (issue 25), each reproduced: damage met mid-command, text that is not
UTF-8 in the database, trees nested a thousand levels deep, a trainer racing another past the stop rule,
and the command line's exit statuses and one-line errors.

Damage "met mid-command" is made by damaging the file and skipping the quick check every writing command
runs first (``guard_writable``, ``quick_check``): as if the damage came after the check.
"""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from clparse.cli import main
from clparse.errors import DatabaseError, ParameterError
from clparse.store.database import DAMAGED
from tests.conftest import read_rows, write_sql

# ----------------------------------------------------------------------------- helpers


def cli(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def error_lines(result: Result) -> list[str]:
    """The output's lines from the first ``Error:`` on (one line when the error is told in one)."""
    lines = result.output.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("Error:")), len(lines))
    return lines[first:]


def assert_one_error_line(result: Result, *needles: str) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output, result.output
    lines = error_lines(result)
    assert len(lines) == 1, result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def pages(db: Path, table: str, kind: str) -> list[int]:
    """The pages of ``table`` (or index) of one kind (``leaf``, ``internal``, ``overflow``), from dbstat."""
    return [row[0] for row in read_rows(db, "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ?",
                                        table, kind)]


def damage(db: Path, numbers: list[int], offset: int = 0, size: int = 2000) -> None:
    """Overwrite ``size`` bytes at ``offset`` of each page (offset 0: the b-tree page header, which SQLite
    reports as a malformed database when it reads the page)."""
    page_size = read_rows(db, "PRAGMA page_size")[0][0]
    assert numbers
    with open(db, "r+b") as handle:
        for number in numbers:
            handle.seek((number - 1) * page_size + offset)
            handle.write(b"\xa5" * size)


def label_state(db: Path, label: str) -> tuple[Any, ...]:
    rows = read_rows(db, "SELECT t.state, t.iteration, t.message, t.margins_iteration FROM label_training t "
                         "JOIN labels l ON l.id = t.label_id WHERE l.name = ?", label)
    return rows[0] if rows else ()


def trees(db: Path, label: str) -> int:
    return int(read_rows(db, "SELECT count(*) FROM iterations i JOIN labels l ON l.id = i.label_id "
                             "WHERE l.name = ?", label)[0][0])


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick check before writing finds nothing: the damage comes after it."""
    import clparse.api
    import clparse.train.parallel

    monkeypatch.setattr(clparse.api, "guard_writable", lambda db: None)
    monkeypatch.setattr(clparse.train.parallel, "quick_check", lambda db: None)


# ----------------------------------------------------------------------------- 7. damage mid-command


def test_damage_met_mid_training_stops_every_label_in_one_line(db_copy: Path, unchecked: None) -> None:
    """SQLite finds the examples damaged while a label loads: one DAMAGED error, raised (not a per-label
    failure), nothing more written: the label is not marked failed and the next label is not touched."""
    from clparse import api

    before = label_state(db_copy, "VP")
    damage(db_copy, pages(db_copy, "label_examples", "overflow"))
    with pytest.raises(DatabaseError, match="damaged"):
        api.train(db_copy, ["PP", "VP"], max_iterations=40)
    assert label_state(db_copy, "PP")[0] != "failed"
    assert label_state(db_copy, "VP") == before


def test_an_unexpected_error_in_a_damaged_file_is_damage_and_writes_nothing(
        db_copy: Path, unchecked: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ValueError from data that do not fit (what a damaged blob gives) in a file SQLite's quick check
    finds damaged: one DAMAGED line, and "failed" is not written into the file."""
    from clparse import api
    from clparse.store.training import TrainingStore

    def broken(self: TrainingStore, label: str) -> Any:
        raise ValueError("repeats may not contain negative values.")

    monkeypatch.setattr(TrainingStore, "load_problem", broken)
    damage(db_copy, pages(db_copy, "sqlite_autoindex_features_1", "leaf")[:1])
    with pytest.raises(DatabaseError, match="damaged") as raised:
        api.train(db_copy, ["PP"], max_iterations=40)
    assert "\n" not in str(raised.value).split(" (quick_check")[0]
    assert label_state(db_copy, "PP")[0] != "failed"


def test_an_unexpected_error_in_a_healthy_file_still_marks_the_label_failed(
        db_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clparse import api
    from clparse.store.training import TrainingStore

    def broken(self: TrainingStore, label: str) -> Any:
        raise ValueError("something else")

    monkeypatch.setattr(TrainingStore, "load_problem", broken)
    summary = api.train(db_copy, ["PP"], max_iterations=40)
    assert summary.failures == {"PP": "ValueError: something else"}
    assert label_state(db_copy, "PP")[:1] == ("failed",)


def test_damage_mid_training_is_one_line_on_the_command_line(db_copy: Path, unchecked: None) -> None:
    damage(db_copy, pages(db_copy, "label_examples", "overflow"))
    result = cli("train", "--db", db_copy, "--labels", "PP,VP", "--max-iterations", "40")
    assert result.exit_code == 1
    assert_one_error_line(result, str(db_copy), DAMAGED)
    assert "warning: label" not in result.output


# ----------------------------------------------------------------------------- 8. text that is not UTF-8


@pytest.mark.parametrize("command", [("status",), ("train", "--max-iterations", "30")])
def test_text_that_is_not_utf8_is_one_line(db_copy: Path, command: tuple[str, ...]) -> None:
    write_sql(db_copy, "UPDATE labels SET name = CAST(X'fffe' AS TEXT) WHERE name = 'PP'")
    result = cli(*command, "--db", db_copy)
    assert result.exit_code == 1, result.output
    assert_one_error_line(result, str(db_copy), "not UTF-8")


def test_a_treebank_file_that_is_not_utf8_still_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ptb"
    path.write_bytes(b"(S (NN a))\n(S (NN \xff))\n")
    result = cli("treebank", "stats", path)
    assert result.exit_code == 1
    assert_one_error_line(result, f"{path}:2:", "not UTF-8")


# ----------------------------------------------------------------------------- 10. deeply nested trees

DEPTH = 1000


def nested(depth: int, labels: tuple[str, ...]) -> str:
    """A tree of one word under ``depth`` phrases whose labels cycle through ``labels``."""
    opened = "".join(f"({labels[i % len(labels)]} " for i in range(depth))
    return f"(ROOT {opened}(NN word){')' * depth})"


def test_trees_nested_1000_deep_are_read_written_and_preprocessed(tmp_path: Path) -> None:
    from clparse.preprocess import PreprocessConfig, preprocess_treebank
    from clparse.read import format_tree, format_tree_indented, parse_tree, read_trees

    path = tmp_path / "deep.ptb"
    path.write_text("(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat))))\n"
                    + nested(DEPTH, ("S",)) + "\n" + nested(DEPTH, ("NP", "S")) + "\n"
                    + nested(DEPTH, ("NP-SBJ", "S", "``")).replace("(NN word)", "(`` ``) (NN word) (. .)")
                    + "\n")
    read = list(read_trees(path))
    assert len(read) == 4
    deep = read[2]
    assert parse_tree(format_tree(deep)) == deep and deep.copy() == deep
    assert len(format_tree_indented(deep).splitlines()) == DEPTH + 1
    assert len(list(deep.spans())) == DEPTH + 2
    done = list(preprocess_treebank(read, PreprocessConfig()))
    assert [p.tree.words() for p in done] == [["the", "cat", "sat"], ["word"], ["word"], ["word"]]
    assert str(done[1].tree) == "(ROOT (S (NN word)))"  # the self-projections collapsed
    assert len(list(done[2].tree.phrases())) == DEPTH + 1
    result = cli("treebank", "preprocess", path)
    assert result.exit_code == 0, result.output
    result = cli("treebank", "stats", "--preprocess", path)
    assert result.exit_code == 0, result.output


def test_prepare_on_a_tree_too_deep_names_it_and_keeps_no_database(tmp_path: Path) -> None:
    """Past preprocessing, a step that recurses per level may not take a tree 1000 levels deep: one line
    naming file and line, and the database the command created is removed again."""
    path = tmp_path / "deep.ptb"
    path.write_text("(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat))))\n" + nested(DEPTH, ("NP", "S")) + "\n")
    db = tmp_path / "deep.sqlite"
    result = cli("prepare", "--db", db, "--train", path, "--max-words", "0", "--tagger", "perceptron")
    assert "Traceback" not in result.output and not isinstance(result.exception, RecursionError)
    if result.exit_code == 0:  # every step handled it (iterative all the way)
        return
    assert result.exit_code == 1, result.output
    assert_one_error_line(result, f"{path}:2:1", "levels deep")
    assert not db.exists()


# ------------------------------------------------------------------ 4. the writer checks the stop rule


def test_a_label_finished_by_another_trainer_before_the_claim_gets_no_extra_tree(
        db_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first look at the label is stale (another trainer committed its last iteration since): the
    state read under the claim decides, and no tree is added past --max-iterations."""
    import clparse.train.label as label_module
    from clparse.train import StopRule, train

    done = trees(db_copy, "ADJP")
    real = label_module.checked_state
    calls = []

    def stale_first(store: Any, label: str, settings: Any) -> Any:
        state = real(store, label, settings)
        calls.append(label)
        if len(calls) == 1:  # what the racing trainer saw before the other one committed its last tree
            return dataclasses.replace(state, iteration=state.iteration - 1, state="paused")
        return state

    monkeypatch.setattr(label_module, "checked_state", stale_first)
    summary = train(db_copy, ["ADJP"], rule=StopRule(max_iterations=done))
    assert summary.states == {"ADJP": "stopped"}
    assert trees(db_copy, "ADJP") == done
    assert label_state(db_copy, "ADJP")[:2] == ("stopped", done)


def test_dask_racing_another_trainer_does_not_overshoot(db_copy: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``--dask``: the label was unfinished when the run looked (``_settle_finished``), another trainer
    finished it before the coordinator's claim: the coordinator decides on the state under its claim."""
    pytest.importorskip("distributed")
    import clparse.train.parallel as parallel
    from clparse.train import StopRule, train

    done = trees(db_copy, "ADJP")
    monkeypatch.setattr(parallel, "_settle_finished", lambda db, labels, *args: list(labels))
    summary = train(db_copy, ["ADJP"], rule=StopRule(max_iterations=done), dask="local:1")
    assert summary.states == {"ADJP": "stopped"} and not summary.failures
    assert trees(db_copy, "ADJP") == done
    assert label_state(db_copy, "ADJP")[:2] == ("stopped", done)


# ----------------------------------------------------------------------------- a label stopped at its start


def test_a_label_stopped_at_its_start_stores_its_margins(db_copy: Path) -> None:
    """Interrupted with its margins behind its last iteration, then run with a rule it has reached: the stop
    stores the margins at its last iteration (docs/schema.md, margins_iteration), bit-identical to replay."""
    import numpy as np

    from clparse import api
    from clparse.store.training import TrainingStore
    from clparse.train.weights import margins_after

    start = trees(db_copy, "ADJP")

    def interrupt(label: str, result: Any) -> None:
        if result.iteration == start + 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        api.train(db_copy, ["ADJP"], max_iterations=start + 10, on_iteration=interrupt)
    assert label_state(db_copy, "ADJP")[0::3] == ("paused", start)  # the margins lag two trees
    summary = api.train(db_copy, ["ADJP"], max_iterations=start + 2)
    assert summary.states == {"ADJP": "stopped"}
    state, iteration, _, margins_iteration = label_state(db_copy, "ADJP")
    assert (state, iteration, margins_iteration) == ("stopped", start + 2, start + 2)
    store = TrainingStore(db_copy, readonly=True)
    try:
        stored = store.state("ADJP").margins
        assert np.array_equal(stored, margins_after(store, "ADJP", start + 2))
    finally:
        store.close()


# ----------------------------------------------------------------------------- the command line


def test_empty_labels_are_an_error_not_every_label(db_copy: Path) -> None:
    from clparse import api

    before = read_rows(db_copy, "SELECT count(*) FROM iterations")
    for labels in ([], [""], ["NP", ""]):
        with pytest.raises(ParameterError) as raised:
            api.train(db_copy, labels, max_iterations=100)
        assert raised.value.parameter == "labels"
    for value in ("", ",", "NP,"):
        result = cli("train", "--db", db_copy, "--labels", value, "--max-iterations", "100")
        assert result.exit_code == 2 and "--labels" in result.output, result.output
    assert read_rows(db_copy, "SELECT count(*) FROM iterations") == before


@pytest.fixture
def damaged_past_first_pages(db_copy: Path) -> Path:
    """The first pages (schema, labels, label_training) intact, the feature rows' pages damaged."""
    damage(db_copy, pages(db_copy, "feature_rows", "overflow")[:200])
    return db_copy


def test_status_on_a_file_damaged_past_its_first_pages_fails(damaged_past_first_pages: Path) -> None:
    result = cli("status", "--db", damaged_past_first_pages)
    assert result.exit_code == 1, result.output
    assert_one_error_line(result, str(damaged_past_first_pages), DAMAGED)


def test_parse_on_a_damaged_file_is_one_line(db_copy: Path, tmp_path: Path) -> None:
    """Past the first pages where a parser reads (the feature index); damage only training reads leaves a
    parse as it was: tests/test_parse_damage_check.py."""
    damage(db_copy, pages(db_copy, "features", "leaf")[-3:])
    text = tmp_path / "in.txt"
    text.write_text("the cat sat .\n")
    result = cli("parse", "--db", db_copy, "--theta", "3", text)
    assert result.exit_code == 1, result.output
    assert_one_error_line(result, str(db_copy), DAMAGED)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_train_paused_by_a_signal_exits_128_plus_the_signal(db_copy: Path, monkeypatch: pytest.MonkeyPatch,
                                                            signum: int, status: int) -> None:
    """The command line's side: a run paused cleanly by Ctrl-C or SIGTERM says so and exits 130 or 143."""
    import clparse.cli.training as training
    from clparse import api
    from clparse.train import StopRule
    from clparse.train.parallel import TrainSummary

    def paused_run(db: Path, labels: Any, *, should_stop: Any, on_start: Any, **_: Any) -> TrainSummary:
        on_start(api.TrainPlan(["ADJP", "NP"], "until Θ < 3", "1 at a time"))
        os.kill(os.getpid(), signum)  # the command's own handler takes it: a request to pause
        assert should_stop()
        return TrainSummary(StopRule(until_theta=3.0), states={"ADJP": "paused"})

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(training.api, "train", paused_run)
    try:
        result = cli("train", "--db", db_copy)
    finally:
        for s, handler in handlers.items():
            signal.signal(s, handler)
    assert result.exit_code == status, result.output
    assert "paused; run the same command again to resume" in result.output


@pytest.mark.slow
def test_train_jobs_2_paused_by_sigterm_exits_143(db_copy: Path, tmp_path: Path) -> None:
    """The whole command in a subprocess: --jobs 2, SIGTERM once a label has committed an iteration."""
    from tests.test_train import Runs, progress, watch

    runs = Runs(tmp_path)
    try:
        process = runs.start("train", "--db", str(db_copy), "--labels", "NP,VP", "--max-iterations", "100000",
                             "--jobs", "2")
        start = progress(db_copy).iterations
        at = watch(process, db_copy, lambda p, _: p.iterations.get("NP", 0) > start.get("NP", 0))
        assert at is not None, runs.output(process)[1][-2000:]
        process.send_signal(signal.SIGTERM)
        code, _, err = runs.finish(process)
        assert code == 143, err
        assert "paused; run the same command again to resume" in err and "Traceback" not in err
        states = progress(db_copy).states
        assert states["NP"] == "paused"
        assert "training" not in states.values() and "failed" not in states.values()
    finally:
        runs.cleanup()
