"""The damage check of a parsing command walks the tables a parser reads, not the training examples.

A parse from a 6 GB training database spent 1.2 s (18 s from a cold disk) checking examples it never
reads. These tests pin the two halves of the bargain: damage where a parser reads is refused in the one
damage line, damage only training reads leaves the parse as it was (and ``clparse check`` still finds
it); and every table a parse reads, watched by SQLite's authorizer, is one the list names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest

from clparse import api
from clparse.errors import DatabaseError
from clparse.store.database import integrity_check, quick_check
from clparse.store.reading import CHECKED_TABLES, PARSER_TABLES
from tests.conftest import damage, dev_tagged, invoke_cli

THETA = 4.0


@contextmanager
def tables_read() -> Iterator[set[str]]:
    """Every table any APSW connection opened meanwhile reads (SQLite's authorizer sees each column)."""
    seen: set[str] = set()
    lock = threading.Lock()

    def authorize(action: int, first: str | None, *_: object) -> int:
        if action == apsw.SQLITE_READ and first is not None:
            with lock:
                seen.add(first)
        return apsw.SQLITE_OK

    def watch(connection: apsw.Connection) -> None:
        connection.authorizer = authorize

    apsw.connection_hooks.append(watch)
    try:
        yield seen
    finally:
        apsw.connection_hooks.remove(watch)


def _schema_tables(db: Path) -> set[str]:
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = connection.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
        return {str(name) for (name,) in rows}
    finally:
        connection.close()


def test_the_lists_name_real_tables_and_leave_out_only_what_parsing_never_needs(trained_db: Path) -> None:
    tables = _schema_tables(trained_db)
    assert set(PARSER_TABLES) <= tables
    assert set(PARSER_TABLES) - set(CHECKED_TABLES) == {"label_training"}
    training_only = {"feature_rows", "label_examples", "margin_checkpoints", "sentences"}
    assert training_only <= tables - set(PARSER_TABLES)


def _parses(db: Path) -> list[Callable[[], object]]:
    tagged = dev_tagged(db)[:3]
    return [
        lambda: [api.open_parser(db, THETA).parse_tagged(sentence) for sentence in tagged],
        lambda: [api.open_parser(db, THETA).parse([word for word, _ in sentence]) for sentence in tagged],
        lambda: api.open_parser(db, THETA).parse_text("The dog barked. It ran away."),
    ]


def test_a_parse_reads_no_table_outside_the_list(db_copy: Path) -> None:
    parses = _parses(db_copy)  # reads the dev sentences, which only the tests read
    with tables_read() as seen:
        for parse in parses:
            parse()
    assert seen - {"sqlite_master", "sqlite_schema", "json_each"} <= set(PARSER_TABLES)
    assert {"tree_nodes", "iterations", "labels", "taggers"} <= seen  # the hook did watch the parses


def test_parsing_at_the_calibrated_theta_reads_no_table_outside_the_list(db_copy: Path) -> None:
    api.calibrate(db_copy, thetas=[5.0, 4.0], settings=api.calibration_settings(db_copy, beam=10))
    sentence = dev_tagged(db_copy)[0]
    with tables_read() as seen:
        api.open_parser(db_copy, "best").parse_tagged(sentence)
    assert "calibrations" in seen
    assert seen - {"sqlite_master", "sqlite_schema", "json_each"} <= set(PARSER_TABLES)


def test_a_combination_reads_no_table_outside_the_list(trained_db: Path, tmp_path: Path) -> None:
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    dev = tmp_path / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:6]),
                   encoding="utf-8")
    combo = tmp_path / "combo.sqlite"
    done = invoke_cli(["combine", "--member", f"{trained_db}@3", "--member", f"{trained_db}@8", "--dev", dev,
                       "--kbest", "2", "--beam", "10", "--max-evaluations", "10", "--out", combo])
    assert done.exit_code == 0, done.stderr
    sentence = dev_tagged(trained_db)[0]
    with tables_read() as seen:
        api.open_parser(combo).parse_tagged(sentence)
    assert "combination_members" in seen
    assert seen - {"sqlite_master", "sqlite_schema", "json_each"} <= set(PARSER_TABLES)


@pytest.mark.parametrize("table", ["label_examples", "feature_rows", "label_training"])
def test_damage_only_training_reads_leaves_the_parse_as_it_was(copy_trained_db: Callable[[], Path],
                                                               table: str) -> None:
    healthy, damaged = copy_trained_db(), copy_trained_db()
    sentences = dev_tagged(healthy)[:5]
    before = [str(api.open_parser(healthy, THETA).parse_tagged(s)) for s in sentences]
    if table == "label_training":  # its root page holds the rows parsing reads: damage a margin vector
        _damage_margins(damaged)
    else:
        damage(damaged, table)
    assert [str(api.open_parser(damaged, THETA).parse_tagged(s)) for s in sentences] == before
    with pytest.raises(DatabaseError, match="the database is damaged"):
        integrity_check(damaged)  # `clparse check` still finds it


def _damage_margins(db: Path) -> None:
    """Overwrite a page of the margin vectors' overflow chains (label_training pages parsing never reads)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
        root = int(connection.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'label_training'")
                   .fetchone()[0])
        pages = [int(page) for (page,) in connection.execute(
            "SELECT pageno FROM dbstat WHERE name = 'label_training' AND pagetype = 'overflow' "
            "ORDER BY pageno")]
    finally:
        connection.close()
    assert pages and root not in pages
    with open(db, "r+b") as handle:
        handle.seek((pages[len(pages) // 2] - 1) * page_size)
        handle.write(bytes([0x5A]) * page_size)


@pytest.mark.parametrize("table", ["tree_nodes", "features", "vocabulary", "taggers", "iterations"])
def test_damage_where_a_parser_reads_is_refused_in_the_damage_line(db_copy: Path, table: str) -> None:
    damage(db_copy, table)
    with pytest.raises(DatabaseError, match="the database is damaged; nothing was written to it"):
        api.open_parser(db_copy, THETA)


def test_quick_check_of_named_tables_checks_those_and_their_indexes_only(db_copy: Path) -> None:
    damage(db_copy, "label_examples")
    quick_check(db_copy, tables=["tree_nodes", "no_such_table"])  # passes: a name the file lacks is skipped
    with pytest.raises(DatabaseError, match="the database is damaged"):
        quick_check(db_copy, tables=["label_examples"])
    with pytest.raises(DatabaseError, match="the database is damaged"):
        quick_check(db_copy)  # the whole file, as training commands check it


def test_an_index_of_a_checked_table_is_checked_with_it(db_copy: Path) -> None:
    connection = apsw.Connection(str(db_copy), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        index = connection.execute("SELECT name FROM sqlite_schema WHERE type = 'index' "
                                   "AND tbl_name = 'features' LIMIT 1").fetchone()
    finally:
        connection.close()
    assert index is not None
    damage(db_copy, str(index[0]))
    with pytest.raises(DatabaseError, match="the database is damaged"):
        quick_check(db_copy, tables=CHECKED_TABLES)
