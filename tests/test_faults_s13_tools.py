"""Faults found in the commands around a trained database (report, explain, sql, browse, export, check,
init, quickstart) by a demanding user, one test each (each failed before its fix)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from clparse.errors import ClparseError
from tests.conftest import invoke_cli

OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"


def _listing(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_export_of_an_older_schema_names_the_init_that_upgrades_it(tmp_path: Path) -> None:
    # "old run.sqlite: schema 0008 is older than 0009; run `clparse init`": that init, without --db, makes a
    # new db/clparse.sqlite and leaves the run as it was; export never said it only reads its --db
    old = tmp_path / "old run.sqlite"
    shutil.copyfile(OLD_SCHEMAS / "schema-0008.sqlite", old)
    before = _listing(tmp_path)
    result = invoke_cli(["export", "--db", old, "-o", tmp_path / "parser.sqlite"])
    assert result.exit_code == 1, result.output
    error = result.stderr.strip()
    assert error.startswith(f"Error: {old}: schema 0008 is older than"), error
    assert f"`clparse init --db {shlex.quote(str(old))}`" in error, error
    assert "\n" not in error and "Traceback" not in result.output
    assert _listing(tmp_path) == before  # neither upgraded nor written beside


def test_browse_check_runs_while_the_default_port_is_taken(db_copy: Path) -> None:
    # "Invalid value for '--port': cannot listen on 127.0.0.1:8001 (Address already in use)": --check, a
    # self-test that stops at once, failed while `clparse browse` served (on 8001) in another terminal
    import socket

    from clparse.browse import DEFAULT_HOST, DEFAULT_PORT

    pytest.importorskip("datasette")
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the last server's TIME_WAIT
        try:
            taken.bind((DEFAULT_HOST, DEFAULT_PORT))
            taken.listen()
        except OSError:
            pass  # already taken by someone else: the same case
        result = invoke_cli(["browse", "--db", db_copy, "--check"])
        given = invoke_cli(["browse", "--db", db_copy, "--check", "--port", DEFAULT_PORT])
    assert result.exit_code == 0, result.output
    assert f":{DEFAULT_PORT}/" not in result.stdout and "training_curve" in result.stdout
    assert given.exit_code == 2 and "--port" in given.stderr, given.output  # a port asked for is kept


@pytest.fixture(scope="module")
def calibrated(copy_trained_db: object) -> Path:
    """A copy of the trained sample with one greedy calibration of two points (never written again)."""
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    api.calibrate(db, thetas=[40.0, 10.0], settings=api.calibration_settings(db, beam=1))
    return Path(db)


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError(28, "No space left on device")])
def test_a_plot_stopped_half_way_leaves_the_figure_before(calibrated: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          stop: BaseException | type[BaseException]) -> None:
    # the figure was written over the old one in place: Ctrl-C or a full disk half-way left a truncated PNG
    import builtins

    from clparse.calibrate import report

    figure = tmp_path / "fig2.png"
    figure.write_bytes(b"the figure of an earlier report")

    class HalfWay:
        def __init__(self, handle: object) -> None:
            self.handle = handle

        def __enter__(self) -> HalfWay:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()  # type: ignore[attr-defined]

        def write(self, data: bytes) -> int:
            self.handle.write(data[:len(data) // 2])  # type: ignore[attr-defined]
            raise stop

        def __getattr__(self, name: str) -> object:
            return getattr(self.handle, name)

    def halfway_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = builtins.open(file, mode, *args, **kwargs)  # type: ignore[call-overload]
        return HalfWay(handle) if "w" in mode else handle

    monkeypatch.setattr(report, "open", halfway_open, raising=False)
    with pytest.raises(KeyboardInterrupt if stop is KeyboardInterrupt else ClparseError):
        report.draw_figure(calibrated, figure)
    assert figure.read_bytes() == b"the figure of an earlier report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig2.png"]  # no scratch file left either
    monkeypatch.undo()
    report.draw_figure(calibrated, figure)
    assert figure.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("query", [".tables", ".schema iterations", "-- the tables\n.tables"])
def test_a_shell_command_given_as_query_says_where_it_works(trained_db: Path, query: str) -> None:
    # `clparse sql --db DB .tables`, as sqlite3 takes it, said only 'SQL error: near ".": syntax error'
    result = invoke_cli(["sql", "--db", trained_db, query])
    assert result.exit_code == 1, result.output
    command = query.split("\n")[-1].split()[0]
    error = result.stderr.strip()
    assert error.startswith(f"Error: {command} is a command of the interactive shell"), error
    assert f"clparse sql --db {trained_db}` without QUERY" in error and "syntax error" not in error
    asked = error.split('in SQL: "')[1].rstrip('"')  # the SQL said instead answers
    rows = json.loads(invoke_cli(["sql", "--db", trained_db, "--json", asked]).stdout)
    if command == ".tables":
        assert {"iterations", "labels"} <= {row["name"] for row in rows}
    else:
        assert len(rows) == 1 and "iterations" in rows[0]["sql"] and "CREATE TABLE" in rows[0]["sql"]


@pytest.mark.parametrize("flag", ["--csv", "--json"])
def test_a_format_for_the_shell_is_refused_not_ignored(trained_db: Path, flag: str) -> None:
    # `echo "SELECT 1 AS a, 2 AS b;" | clparse sql --db DB --csv` printed the shell's "1|2", --csv ignored
    result = invoke_cli(["sql", "--db", trained_db, flag], stdin="SELECT 1 AS a, 2 AS b;\n")
    assert result.exit_code == 2, result.output
    assert flag in result.stderr and f".mode {flag[2:]}" in result.stderr
    assert "1|2" not in result.stdout


def test_explain_without_a_sentence_at_a_terminal_says_it_reads_one(trained_db: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # `clparse explain --db DB` (the sentence forgotten) waited on the terminal printing nothing at all
    import clparse.progress

    monkeypatch.setattr(clparse.progress, "is_terminal", lambda stream: True)
    result = invoke_cli(["explain", "--db", trained_db, "--theta", "3"], stdin="The dog barked .\n")
    assert result.exit_code == 0, result.output
    assert "reading sentences from the terminal" in result.stderr and "Ctrl-D" in result.stderr
    assert "(ROOT" in result.stdout
    monkeypatch.undo()  # from a pipe or a file: nothing said
    piped = invoke_cli(["explain", "--db", trained_db, "--theta", "3"], stdin="The dog barked .\n")
    assert piped.exit_code == 0 and "reading sentences" not in piped.stderr, piped.output


def test_explain_counts_one_tree_in_the_singular(trained_db: Path) -> None:
    # "ROOT over tokens 0-3 ...: confidence +2.8262 from 1 trees"
    from clparse import api
    from clparse.explain import explain

    found = explain(api.open_parser(trained_db, 10.0), ["The", "cat", "."])  # ROOT: one tree
    one = [c for c in found.constituents if len(c.kappas) == 1]
    assert one, [len(c.kappas) for c in found.constituents]
    text = found.format()
    assert " from 1 trees" not in text and " from 1 tree" in text
    assert all(f" from {len(c.kappas)} trees" in text for c in found.constituents if len(c.kappas) > 1)


def test_quickstart_commands_paste_with_a_space_in_a_path(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # "clparse prepare --db db/quickstart.sqlite --train /Users/me/My Projects/.../train.ptb ...": the
    # command it says does the same by hand split the path in two when pasted
    from clparse import api, quickstart
    from clparse.data import sample_path

    where = tmp_path / "My Projects"
    where.mkdir()
    files = {split: where / f"{split}.ptb" for split in ("train", "dev")}
    for split, file in files.items():
        shutil.copyfile(sample_path(split), file)
    monkeypatch.setattr(quickstart, "sample_path", lambda split: files[split])

    class Stop(Exception):
        pass

    def stop(*args: object, **kwargs: object) -> None:
        raise Stop

    monkeypatch.setattr(api, "init", stop)  # what step 1 says is all this test needs
    said: list[str] = []
    db = tmp_path / "a db" / "quickstart.sqlite"
    with pytest.raises(Stop):
        quickstart.run_quickstart(echo=said.append, db=db)
    command = said[0].split(": ", 1)[1]
    assert shlex.split(command) == ["clparse", "prepare", "--db", str(db), "--train", str(files["train"]),
                                    "--dev", str(files["dev"])]


def test_browse_check_with_open_is_refused_not_ignored(trained_db: Path) -> None:
    # `browse --check --open` checked and stopped; --open was ignored in silence
    result = invoke_cli(["browse", "--db", trained_db, "--check", "--open"])
    assert result.exit_code == 2, result.output
    assert "--open" in result.stderr and "--check" in result.stderr and "http" not in result.stdout


@pytest.mark.parametrize("plot", [False, True])
def test_report_of_a_database_without_a_run_asks_for_prepare(tmp_path: Path, plot: bool) -> None:
    # "no calibration yet; run `clparse calibrate`", whose own answer was then "has no dev sentences (prepare
    # was given no --dev)": prepare had never run
    from clparse.store.database import init_database

    db = init_database(tmp_path / "new.sqlite")
    result = invoke_cli(["report", "--db", db, *(["--plot", tmp_path / "f.png"] if plot else [])])
    assert result.exit_code == 1, result.output
    assert f"{db}: no prepared run; run `clparse prepare --db {db}" in result.stderr, result.stderr
    assert "calibrate" not in result.stderr and not (tmp_path / "f.png").exists()


def test_report_of_a_run_not_calibrated_still_asks_for_calibrate(trained_db: Path) -> None:
    result = invoke_cli(["report", "--db", trained_db])
    assert result.exit_code == 1 and f"run `clparse calibrate --db {trained_db}`" in result.stderr
