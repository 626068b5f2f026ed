"""`clparse export` (issue 30 item 1): a parser database without the training examples.

On a calibrated copy of the session's trained sample: the export parses the dev sentences exactly as
the run does at several Θ̂ (and "best"), tags alike, reports alike, calibrates alike and passes
`clparse check`; it holds no example, margin or training sentence and is smaller; the run is only
read (same bytes, no -wal/-shm left); `train` and `prepare` refuse the export in one line; an
existing --out is refused unless --force, and a failed export leaves no file behind.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clparse.cli import main
from clparse.data import sample_path
from tests.conftest import read_rows

CLPARSE = str(Path(sys.executable).with_name("clparse"))
THETAS = ["20", "6", "3", "best"]
EXAMPLE_TABLES = ("feature_rows", "label_examples", "margin_checkpoints")


def invoke(*args: object, stdin: str | None = None) -> Result:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin)


def state(db: Path) -> tuple[list[str], str, int]:
    """What reading must not change: the directory's entries, the file's bytes and mtime."""
    return (sorted(p.name for p in db.parent.iterdir()), hashlib.sha256(db.read_bytes()).hexdigest(),
            db.stat().st_mtime_ns)


@pytest.fixture(scope="module")
def run_db(copy_trained_db: Callable[[], Path]) -> Path:
    """A copy of the trained sample, calibrated (beam 1) so that "best" is a Θ̂, alone in its directory."""
    from clparse import api

    db = copy_trained_db()
    api.calibrate(db, thetas=[20.0, 6.0, 3.0], settings=api.calibration_settings(db, beam=1))
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name]  # nobody has it open
    return db


@pytest.fixture(scope="module")
def exported(run_db: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, subprocess.CompletedProcess[str], tuple[list[str], str, int]]:
    """(the parser database, the `clparse export` process that wrote it, the run's state before)."""
    before = state(run_db)
    out = tmp_path_factory.mktemp("parser") / "parser.sqlite"
    done = subprocess.run([CLPARSE, "export", "--db", str(run_db), "--out", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out, done, before


def test_the_run_is_only_read(run_db: Path, exported: tuple) -> None:
    _, done, before = exported
    assert state(run_db) == before  # same bytes and mtime; no -wal, -shm or scratch file beside it
    assert f"exported to {exported[0]}" in done.stdout and done.stderr == ""


def test_the_export_holds_no_examples_and_is_smaller(run_db: Path, exported: tuple) -> None:
    out = exported[0]
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no scratch file left
    for table in EXAMPLE_TABLES:
        assert read_rows(out, f"SELECT count(*) FROM {table}") == [(0,)], table
        assert read_rows(run_db, f"SELECT count(*) FROM {table}")[0][0] > 0, table
    [(labels,)] = read_rows(run_db, "SELECT count(*) FROM labels")
    assert read_rows(out, "SELECT count(*), sum(length(margins_float64)), max(margins_iteration) "
                          "FROM label_training") == [(labels, 0, 0)]
    assert read_rows(out, "SELECT DISTINCT split FROM sentences") == [("dev",)]
    assert read_rows(out, "SELECT count(*) FROM inference_paths") == [(0,)]
    keep = "SELECT {} FROM {} ORDER BY 1, 2"
    for table, columns in (("iterations", "label_id, iteration, theta, sha256"),
                           ("tree_nodes", "label_id, iteration, node, feature_id, confidence"),
                           ("features", "id, text"), ("vocabulary", "word, count"), ("labels", "id, name"),
                           ("taggers", "run_id, model_blob"),
                           ("calibration_points", "calibration_id, theta, f1"),
                           ("calibrations", "id, best_theta"),
                           ("calibration_labels", "calibration_id, theta"), ("sentences", "id, gold_tree")):
        where = " WHERE split = 'dev'" if table == "sentences" else ""
        query = keep.format(columns, table + where)
        assert read_rows(out, query) == read_rows(run_db, query), table
    ratio = out.stat().st_size / run_db.stat().st_size
    print(f"\nexport: {out.stat().st_size:,} bytes, {100 * ratio:.1f} % of the run's "
          f"{run_db.stat().st_size:,}")
    assert ratio < 0.5


def test_the_export_says_where_it_came_from(run_db: Path, exported: tuple) -> None:
    from clparse import __version__
    from clparse.store.export import export_origin

    origin = export_origin(exported[0])
    [(digest, config)] = read_rows(run_db, "SELECT input_digest, config_json FROM runs")
    assert origin is not None and origin["source"] == str(run_db.resolve())
    assert origin["source_input_digest"] == digest and origin["clparse_version"] == __version__
    assert origin["exported_at"] and "feature_rows" in origin["without"]
    assert export_origin(run_db) is None
    [(stored,)] = read_rows(exported[0], "SELECT config_json FROM runs")
    assert {k: v for k, v in json.loads(stored).items() if k != "export"} == json.loads(config)


@pytest.mark.parametrize("theta", THETAS)
def test_parses_are_identical_at_every_theta(run_db: Path, exported: tuple, theta: str) -> None:
    dev = sample_path("dev")
    outputs = [invoke("parse", "--db", db, "--theta", theta, "--beam", "10", "--input-format", "ptb", dev)
               for db in (run_db, exported[0])]
    assert all(o.exit_code == 0 for o in outputs), [o.stderr for o in outputs]
    assert outputs[0].stdout.count("(ROOT") == 75
    assert outputs[0].stdout_bytes == outputs[1].stdout_bytes


def test_tagging_and_tagger_parsing_are_identical(run_db: Path, exported: tuple) -> None:
    text = "The cat sat on the mat .\nShe reads books about old maps in the library .\n"
    for command in (["tag"], ["parse", "--beam", "10"]):
        outputs = [invoke(*command, "--db", db, stdin=text) for db in (run_db, exported[0])]
        assert all(o.exit_code == 0 for o in outputs), [o.stderr for o in outputs]
        assert outputs[0].stdout and outputs[0].stdout == outputs[1].stdout


def test_report_and_status_are_identical(run_db: Path, exported: tuple) -> None:
    for command in (["report", "--labels"], ["status"]):
        outputs = [invoke(*command, "--db", db) for db in (run_db, exported[0])]
        assert all(o.exit_code == 0 for o in outputs), [o.stderr for o in outputs]
        assert outputs[0].stdout == outputs[1].stdout


def test_check_passes(exported: tuple) -> None:
    done = invoke("check", "--db", exported[0])
    assert done.exit_code == 0 and done.stdout.strip().endswith(": ok")


@pytest.mark.parametrize("command", [
    ["train", "--max-iterations", "1"], ["train", "--labels", "NP"], ["train", "--jobs", "2"],
    ["prepare", "--train", str(sample_path("train")), "--dev", str(sample_path("dev"))]])
def test_train_and_prepare_refuse_an_export(exported: tuple, command: list[str]) -> None:
    out = exported[0]
    before = hashlib.sha256(out.read_bytes()).hexdigest()
    done = invoke(command[0], "--db", out, *command[1:])
    assert done.exit_code == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("Error: "), done.stderr
    assert "by `clparse export`" in done.stderr and f"cannot be used to {command[0]}" in done.stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == before


def test_calibrate_works_on_an_export_and_agrees(run_db: Path, exported: tuple, tmp_path: Path) -> None:
    from clparse import api
    from clparse.store.database import backup_database

    scores = []
    for db in (run_db, exported[0]):
        copy = tmp_path / f"{len(scores)}.sqlite"
        backup_database(db, copy)
        result = api.calibrate(copy, thetas=[4.0], settings=api.calibration_settings(copy, beam=1))
        scores.append([(p.theta, p.f1, p.trees, p.splits) for p in result.points])
    assert scores[0] == scores[1] and scores[0]


def test_an_existing_out_is_refused_unless_force(run_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "parser.sqlite"
    out.write_bytes(b"not a database")
    done = invoke("export", "--db", run_db, "--out", out)
    assert done.exit_code == 1 and len(done.stderr.splitlines()) == 1 and "already exists" in done.stderr
    assert out.read_bytes() == b"not a database"
    done = invoke("export", "--db", run_db, "--out", out, "--force")
    assert done.exit_code == 0, done.stderr
    assert invoke("check", "--db", out).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parser.sqlite"]


def test_the_run_itself_is_never_the_out(run_db: Path) -> None:
    before = hashlib.sha256(run_db.read_bytes()).hexdigest()
    done = invoke("export", "--db", run_db, "--out", run_db, "--force")
    assert done.exit_code == 1 and "another file than the run" in done.stderr
    assert hashlib.sha256(run_db.read_bytes()).hexdigest() == before


def test_a_database_without_a_run_leaves_nothing(tmp_path: Path) -> None:
    from clparse.store.database import init_database

    empty = init_database(tmp_path / "empty.sqlite")
    out = tmp_path / "out" / "parser.sqlite"
    out.parent.mkdir()
    done = invoke("export", "--db", empty, "--out", out)
    assert done.exit_code == 1 and "no prepared run" in done.stderr and len(done.stderr.splitlines()) == 1
    assert list(out.parent.iterdir()) == []
    done = invoke("export", "--db", tmp_path / "missing.sqlite", "--out", out)
    assert done.exit_code == 1 and "no such database" in done.stderr


def test_an_export_of_an_export_parses_alike(exported: tuple, tmp_path: Path) -> None:
    from clparse.store.export import export_parser

    again = export_parser(exported[0], tmp_path / "again.sqlite")
    assert again.rows["tree_nodes"] > 0 and not any(again.left_out.get(t) for t in EXAMPLE_TABLES)
    outputs = [invoke("parse", "--db", db, "--theta", "6", "--beam", "10", stdin="The cat sat on the mat .\n")
               for db in (exported[0], again.out)]
    assert outputs[0].stdout == outputs[1].stdout


def test_paths_are_never_pasted_into_sql(run_db: Path, tmp_path: Path) -> None:
    """Quotes, `?`, `#` and `%` in either path: read and written as files, never as SQL or URI text."""
    import shutil

    odd = tmp_path / "it's a \"run\" ?#%20;" / "run's.sqlite"
    odd.parent.mkdir()
    shutil.copyfile(run_db, odd)
    out = odd.with_name("parser'); DROP TABLE runs; --.sqlite")
    done = invoke("export", "--db", odd, "--out", out)
    assert done.exit_code == 0, done.stderr
    assert invoke("check", "--db", out).exit_code == 0
    from clparse.store.export import export_origin

    assert export_origin(out)["source"] == str(odd.resolve())  # type: ignore[index]
