"""Shared fixtures: one database prepared from the bundled sample and trained to Θ 3, built once per session.

Tests that only read use ``trained_db`` directly (it must never be written: no calibration, no
training). Tests that write (calibrate, delete checkpoints) get their own copy through ``db_copy``
or ``copy_trained_db``. Copies go through SQLite's online backup API, which reads committed pages
including any still in the WAL, so a copy is always a consistent database (a plain file copy could
miss the WAL).

Tests marked ``slow`` (end-to-end runs in subprocesses, kills and resumes, long property tests;
each has a smaller fast test of the same thing) are skipped unless pytest is given ``--slow``:
``python -m pytest`` is the fast run, ``python -m pytest --slow`` the full one (CI).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import apsw
import pytest

if TYPE_CHECKING:
    from click.testing import Result

T = TypeVar("T")
SLOW_REASON = "slow: run with pytest --slow"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (the full suite, as CI runs it)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a long test (a smaller one of the same thing runs by default); "
                                       "skipped unless pytest --slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    if config.getoption("--slow"):
        return
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if isinstance(r.longrepr, tuple) and r.longrepr[2].endswith(SLOW_REASON)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} slow tests skipped ({SLOW_REASON})", yellow=True)


def racing(work: Callable[[int], T], threads: int = 4) -> list[T]:
    """``work(k)`` for k in 0..threads-1, each on a thread of its own, the interpreter switching threads as
    often as it can (a race that shows once in three runs at the default interval shows every time); what
    each returned, in order. An exception in any thread is raised here."""
    import sys
    import threading

    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            results[k] = work(k)
        except BaseException as exc:  # raised below, in the test's own thread
            errors.append(exc)

    started = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in started:
            thread.start()
        for thread in started:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    return [results[k] for k in range(threads)]


def dev_tagged(db: Path, repeat: int = 1) -> list[list[tuple[str, str]]]:
    """The stored dev sentences as (word, tag) lists, empty elements dropped (each repeated ``repeat`` times
    over, for long sentences)."""
    from clparse.calibrate.run import dev_trees

    return [[(w, t) for w, t in tree.tagged_words() if t != "-NONE-"] * repeat for tree in dev_trees(db)]


def read_rows(db: Path, query: str, *bindings: object) -> list[tuple]:
    """Rows of a read-only query (APSW: Python's sqlite3 must never be loaded beside it)."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    connection.set_busy_timeout(10_000)
    try:
        return [tuple(row) for row in connection.execute(query, bindings)]
    finally:
        connection.close()


def damage(db: Path, table: str) -> None:
    """Overwrite the root page of ``table``'s b-tree with garbage, as a disk fault would."""
    (root, page_size), = read_rows(db, f"SELECT (SELECT rootpage FROM sqlite_master WHERE name = '{table}'), "
                                       "(SELECT page_size FROM pragma_page_size)")
    with open(db, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(bytes([0x5A]) * page_size)


def write_sql(db: Path, statement: str) -> None:
    """Run one SQL statement on ``db`` behind clparse's back (to damage or alter a database on purpose)."""
    connection = apsw.Connection(str(db))
    try:
        connection.execute(statement)
    finally:
        connection.close()


def backup_database(source: Path, target: Path) -> Path:
    """Copy ``source`` to ``target`` with SQLite's backup API (both plain paths)."""
    reader = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    writer = apsw.Connection(str(target))
    try:
        backup = writer.backup("main", reader, "main")
        try:
            while not backup.done:
                backup.step()
        finally:
            backup.finish()
    finally:
        writer.close()
        reader.close()
    return target


@pytest.fixture
def prepared(tmp_path: Path) -> Path:
    """The bundled sample prepared small (sentences of at most 10 words, a quick tagger), not trained."""
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database

    path = init_database(tmp_path / "p.sqlite")
    prepare(path, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(max_words=10, tagger_iterations=20))
    return path


@pytest.fixture(scope="session")
def trained_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample, prepared (examples and tagger) and every label trained until Θ < 3."""
    from clparse.data import sample_path
    from clparse.examples.prepare import prepare
    from clparse.store.database import init_database
    from clparse.train import StopRule, train

    path = tmp_path_factory.mktemp("trained") / "trained.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")])
    summary = train(path, rule=StopRule(until_theta=3.0))
    assert not summary.failures, summary.failures
    return path


@pytest.fixture(scope="session")
def two_theta_combo(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A combination (`clparse combine`) of the trained sample run at Θ̂ 3 and 8, fitted on six dev trees
    (K = 2, beam 20, summed loss)."""
    from clparse.combine.run import MemberSpec, fit_members
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    folder = tmp_path_factory.mktemp("combo")
    dev = folder / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:6]),
                   encoding="utf-8")
    path = folder / "combo.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("clparse", trained_db, "8")], [dev],
                path, k=2, beam=20, max_evaluations=10, progress=False)
    return path


@pytest.fixture(scope="session")
def copy_trained_db(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A function returning a fresh, writable copy of ``trained_db`` in its own directory."""

    def make() -> Path:
        return backup_database(trained_db, tmp_path_factory.mktemp("copy") / "copy.sqlite")

    return make


@pytest.fixture
def db_copy(copy_trained_db: Callable[[], Path]) -> Path:
    """A writable copy of ``trained_db`` for one test."""
    return copy_trained_db()


def invoke_cli(args: list[object], stdin: str | None = None) -> Result:
    """Run the CLI in-process with stdout and stderr kept apart, whatever click's version (an exception
    stays in ``result.exception``)."""
    from click.testing import CliRunner

    from clparse.cli import main

    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin)
