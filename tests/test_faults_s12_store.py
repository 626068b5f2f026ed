"""Storage and parser-input faults a helper noticed in files outside its area (each failed before its fix)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clparse.errors import ConfigurationError, ParameterError
from clparse.parser import Parser
from clparse.store.calibration import Calibrations


def test_a_point_without_per_label_rows_is_stored(copy_trained_db: Callable[[], Path]) -> None:
    # a dev set with no bracket in any sentence scores no label: the empty insert failed as
    # "NOT NULL constraint failed" (a database error), and the point was lost
    store = Calibrations(copy_trained_db(), readonly=False)
    calibration = store.find_or_create("digest", "{}")
    point = {"theta": 3.0, "trees": 1, "splits": 1, "sentences": 2, "fallbacks": 0, "completions": 0,
             "recall": 0.0, "precision": 0.0, "f1": 0.0, "exact": 100.0, "seconds": 0.1}
    store.add_point(calibration, point, [])
    assert store.point(calibration, 3.0) is not None


@pytest.mark.parametrize("words", [["The", "\ufeffdog"], ["The", "\ufeff", "barked"], ["The", "d\udc80g"]])
def test_words_a_tree_cannot_hold_are_refused(trained_db: Path, words: list[str]) -> None:
    # a byte-order mark inside a word was parsed into a tree that reads back with other words (the tree
    # reader takes U+FEFF as a separator); a lone surrogate gave a tree --format json could not write
    parser = Parser.from_db(trained_db, theta=3.0, beam=1)
    with pytest.raises(ParameterError, match="word"):
        parser.parse(words)
    with pytest.raises(ParameterError, match="word"):
        parser.parse_tagged([(w, "NN") for w in words])


@pytest.mark.parametrize(("first", "again"), [(None, 5), (5, None), (None, None)])
def test_the_perceptrons_default_given_by_number_is_the_same_tagger(tmp_path: Path, first: int | None,
                                                                   again: int | None) -> None:
    # prepare again with --tagger-iterations 5, the perceptron's own default, was refused as "another
    # tagger" against a run prepared without the option (and the reverse)
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database

    path = init_database(tmp_path / "p.sqlite")
    files = ([sample_path("train")], [sample_path("dev")])
    prepare(path, *files, PrepareSettings(max_words=6, tagger="perceptron", tagger_iterations=first))
    prepare(path, *files, PrepareSettings(max_words=6, tagger="perceptron", tagger_iterations=again))
    with pytest.raises(ConfigurationError, match="tagger_iterations"):
        prepare(path, *files, PrepareSettings(max_words=6, tagger="perceptron", tagger_iterations=6))


@pytest.mark.parametrize(("encoding", "name"), [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_the_api_names_a_utf16_file_too(trained_db: Path, tmp_path: Path, encoding: str, name: str) -> None:
    # only the command line said "UTF-16 text ... save the file as UTF-8"; api.parse (and every reader of
    # sentence files) said "binary data (NUL byte), not text; give a text file of tokenized sentences"
    from clparse import api
    from clparse.errors import ClparseError

    wide = tmp_path / "in.txt"
    wide.write_text("The dog barked .\n", encoding=encoding)
    with pytest.raises(ClparseError, match=rf"in\.txt:1: {name} text .* save the file as UTF-8"):
        list(api.parse(trained_db, [str(wide)], "tokens", theta=3.0, beam=1))


def test_a_snapshot_does_not_see_a_commit_made_while_it_reads(copy_trained_db: Callable[[], Path]) -> None:
    # `clparse check` while training ran said "damaged" every time: it read a label's trees and then its
    # iterations in separate snapshots, and a tree committed in between failed its checksum
    from clparse.store.database import Database

    path = copy_trained_db()
    reader, writer = Database(path, readonly=True), Database(path)
    count = "SELECT count(*) FROM calibrations"
    with reader.snapshot() as connection:
        before = connection.exec_driver_sql(count).scalar()
        with writer.transaction() as other:
            other.exec_driver_sql("INSERT INTO calibrations (run_id, settings_digest, settings_json, "
                                  "created_at, updated_at) SELECT id, 'x', '{}', 't', 't' FROM runs")
        assert connection.exec_driver_sql(count).scalar() == before
    with reader.reading() as connection:
        assert connection.exec_driver_sql(count).scalar() == before + 1


def test_the_checksum_checks_read_one_snapshot(trained_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clparse.store import verify
    from clparse.store.database import Database

    used: list[str] = []
    original = Database.snapshot

    def spy(self: Database):  # type: ignore[no-untyped-def]
        used.append("snapshot")
        return original(self)

    monkeypatch.setattr(Database, "snapshot", spy)
    assert verify.verify_checksums(trained_db) == []
    with Database(trained_db, readonly=True) as database:
        verify.verify_label(database, 1, 0)
    assert used == ["snapshot", "snapshot"]


def test_parse_on_a_cluster_without_workers_says_it_is_waiting(trained_db: Path) -> None:
    # `parse --dask tcp://...` on a scheduler with no worker waited in silence for ever; the notice existed
    # in parse_on_cluster, but api.parse (hence the command line) did not pass its warnings to it
    import threading
    import time

    distributed = pytest.importorskip("distributed")
    from clparse import api
    from clparse.data import sample_path

    warnings: list[str] = []
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        def run() -> None:
            try:
                list(api.parse(trained_db, [str(sample_path("dev"))], "ptb", theta=3.0, beam=1,
                               warn=warnings.append, dask=cluster.scheduler_address))
            except Exception:  # the scheduler closed under it, below: not what this test is about
                pass

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not any("has no worker yet" in w for w in warnings) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert any(f"the Dask scheduler at {cluster.scheduler_address} has no worker yet" in w for w in warnings)
