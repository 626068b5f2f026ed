"""`clparse browse`: a real Datasette server on the sample database, over HTTP on localhost.

The server runs in a child process (as `clparse browse` runs it); the test reads the same file with
APSW opened immutable, so neither side writes anything while the other reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import apsw
import pytest

from clparse import api, browse
from clparse.store.engine import open_read_only

pytest.importorskip("datasette")

ROOT = Path(__file__).resolve().parents[1]
CLPARSE = str(Path(sys.executable).with_name("clparse"))


@pytest.fixture(scope="module")
def calibrated_db(copy_trained_db: Callable[[], Path]) -> Path:
    """The session's trained sample with a small calibration (two Θ̂, beam 10), so every query has rows."""
    db = copy_trained_db()
    api.calibrate(db, thetas=[5.0, 3.0], settings=api.calibration_settings(db, beam=10))
    assert not Path(f"{db}-wal").exists()  # a -wal left behind would (rightly) make browse refuse the file
    return db


@pytest.fixture(scope="module")
def server(calibrated_db: Path) -> Iterator[browse.Server]:
    with browse.serving(calibrated_db) as running:
        yield running


def rows_of(db: Path, sql: str, params: dict[str, str]) -> list[dict[str, Any]]:
    """The query's rows read from the file (APSW, immutable: writes nothing), as Datasette's JSON has them."""
    connection = open_read_only(db, "immutable")
    try:
        cursor = connection.cursor()
        names: list[str] = []
        # the column names, read once the statement is prepared (before it completes)
        def column_names(c: apsw.Cursor, _sql: str, _bindings: object) -> bool:
            names.extend(d[0] for d in c.getdescription())
            return True

        cursor.exec_trace = column_names
        return [dict(zip(names, row)) for row in cursor.execute(sql, params)]
    finally:
        connection.close()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def state_of(db: Path) -> tuple[str, int, list[str]]:
    """What must not change: the file's bytes, its mtime, and the names beside it."""
    return (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent)))


# ----------------------------------------------------------------------------- metadata


def test_metadata_describes_every_table_and_column_of_the_database(calibrated_db: Path) -> None:
    tables = browse.build_metadata(calibrated_db)["databases"][calibrated_db.stem]["tables"]
    in_file = rows_of(calibrated_db, "SELECT name FROM sqlite_master WHERE type = 'table' "
                                     "AND name NOT LIKE 'sqlite_%' ORDER BY name", {})
    assert len(in_file) >= 19
    for table in (r["name"] for r in in_file):
        assert tables.get(table, {}).get("description"), f"table {table} has no description"
        for column in rows_of(calibrated_db, "SELECT name FROM pragma_table_info(:t)", {"t": table}):
            name = column["name"]
            assert tables[table]["columns"].get(name), f"{table}.{name} has no description"
    assert set(tables) == {r["name"] for r in in_file}  # nothing described that the file lacks


def test_descriptions_are_the_ones_docs_schema_md_shows() -> None:
    """docs/schema.md is rendered from the same comments (tests/test_schema_doc.py keeps it current); read
    it back, so a description Datasette shows can never differ from the document's."""
    text = (ROOT / "docs" / "schema.md").read_text()
    documented: dict[str, dict[str, str]] = {}
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        table = re.match(r"`(\w+)`", section).group(1)  # type: ignore[union-attr]
        rows = re.finditer(r"^\| `(\w+)` \|(?:[^|]*\|){4}(.*)\|$", section, flags=re.M)
        documented[table] = {m.group(1): m.group(2).strip().replace("\\|", "|") for m in rows}
    described = browse.table_descriptions()
    assert set(documented) == set(described) - set(browse.EXTRA_TABLES)
    for table, columns in documented.items():
        assert {c: " ".join(d.split()) for c, d in described[table][1].items()} == columns, table


# ----------------------------------------------------------------------------- a real server


def test_table_page_shows_the_rows_and_every_description(server: browse.Server, calibrated_db: Path) -> None:
    from markupsafe import escape

    tables = browse.build_metadata(calibrated_db)["databases"][calibrated_db.stem]["tables"]
    described, columns = browse.table_descriptions()["labels"]
    status, page = get(f"{server.database_url}/labels")
    assert status == 200
    assert str(escape(described)) in page
    for column in rows_of(calibrated_db, "SELECT name FROM pragma_table_info('labels')", {}):
        assert f"<dt>{column['name']}</dt><dd>{escape(columns[column['name']])}</dd>" in page
    status, body = get(f"{server.database_url}/labels.json?_shape=array")
    assert status == 200
    assert json.loads(body) == rows_of(calibrated_db, "SELECT * FROM labels ORDER BY id", {})
    served = json.loads(get(f"{server.url}/-/metadata.json")[1])["databases"][calibrated_db.stem]
    assert {name: (t["description"], t["columns"]) for name, t in served["tables"].items()} == {
        name: (t["description"], t["columns"]) for name, t in tables.items()}
    assert {name: query["sql"] for name, query in served["queries"].items()} == {
        name: query.sql for name, query in browse.CANNED_QUERIES.items()}


@pytest.mark.parametrize("budget", [browse.PAGE_BYTES, 200_000, 1])
def test_a_page_of_blob_rows_stays_within_the_byte_budget(calibrated_db: Path, budget: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browse, "PAGE_BYTES", budget)
    tables = browse.build_metadata(calibrated_db)["databases"][calibrated_db.stem]["tables"]
    blobs = {"feature_rows": "indptr_int64 || indices_int32",
             "label_examples": "row_int32 || y_int8 || multiplicity_int32",
             "label_training": "margins_float64", "margin_checkpoints": "margins_float64",
             "taggers": "coalesce(model_json, '') || coalesce(model_blob, x'')", "tagger_nets": "model_blob"}
    for table, content in blobs.items():
        query = f"SELECT avg(length(CAST({content} AS BLOB))) AS a FROM {table}"
        average = rows_of(calibrated_db, query, {})[0]["a"] or 0  # None: an empty table
        size = tables[table].get("size", 100)
        assert average or size == 100, table  # no blobs yet (no tagger net): the default page
        assert size == 1 or size * average <= budget, (table, size, average)  # within the budget
        assert size == 100 or (size + 1) * average > budget, (table, size, average)  # and no smaller
        filled = [t for t in blobs if rows_of(calibrated_db, f"SELECT count(*) AS n FROM {t}", {})[0]["n"]]
    assert {t for t, m in tables.items() if "size" in m} <= set(blobs)
    if budget == 1:
        assert all(tables[t]["size"] == 1 for t in filled)


def test_the_server_pages_blob_tables_as_the_metadata_says(server: browse.Server,
                                                           calibrated_db: Path) -> None:
    served = json.loads(get(f"{server.url}/-/metadata.json")[1])["databases"][calibrated_db.stem]["tables"]
    sized = {t: m["size"] for t, m in served.items() if "size" in m}
    assert sized  # the sample's feature rows are one chunk of several MB
    for table, size in sized.items():
        count = rows_of(calibrated_db, f"SELECT count(*) AS n FROM {table}", {})[0]["n"]
        assert len(browse.fetch_json(f"{server.database_url}/{table}.json?_shape=array")) == min(size, count)


def test_settings_for_large_files(server: browse.Server) -> None:
    settings = json.loads(get(f"{server.url}/-/settings.json")[1])
    # facet suggestions group by every column, blobs too (34 s for one page of a GUM run's feature rows)
    assert settings["suggest_facets"] is False
    assert settings["allow_download"] is False  # a 6 GB download is not browsing (clparse export hands on)
    assert settings["max_returned_rows"] >= 10_000  # every iteration of every label in one curve


@pytest.mark.parametrize("name", list(browse.CANNED_QUERIES))
def test_canned_query_json_is_its_sql_on_the_file(server: browse.Server, calibrated_db: Path,
                                                  name: str) -> None:
    query = browse.CANNED_QUERIES[name]
    # named parameters only (Datasette binds them), and the example gives every one
    assert set(re.findall(r"(?<!:):(\w+)", query.sql)) == set(query.example)
    assert not re.search(r"\{|%s|\?", query.sql)
    for params in (query.example, {p: "" for p in query.example}):  # a label given, then "all"
        rows = browse.fetch_json(server.query_url(name, params, ".json"))
        assert rows == rows_of(calibrated_db, query.sql, params), params
    assert rows_of(calibrated_db, query.sql, query.example), f"{name}'s example shows nothing"


def test_training_curve_is_what_training_stored(server: browse.Server, calibrated_db: Path) -> None:
    for status in api.status(calibrated_db)[:5]:
        curve = browse.fetch_json(server.query_url("training_curve", {"label": status.label}, ".json"))
        assert [r["iteration"] for r in curve] == list(range(1, status.iteration + 1))
        assert {r["label"] for r in curve} == {status.label}
        thetas = [r["theta"] for r in curve]
        assert thetas == sorted(thetas, reverse=True) and thetas[-1] == status.theta
        assert curve[-1]["total_splits"] == status.splits == sum(r["splits"] for r in curve)
        assert curve[-1]["loss_after"] == status.loss
        assert all(a["loss_after"] == b["loss_before"] for a, b in zip(curve, curve[1:]))
    hostile = "NP' OR '1'='1"  # bound as a value: no label has that name
    assert browse.fetch_json(server.query_url("training_curve", {"label": hostile}, ".json")) == []


def test_top_features_sum_the_gains_of_the_label_trees(server: browse.Server, calibrated_db: Path) -> None:
    nodes = rows_of(calibrated_db, "SELECT n.feature_id, n.gain FROM tree_nodes AS n JOIN labels AS l ON "
                                   "l.id = n.label_id WHERE l.name = 'VP' AND n.feature_id IS NOT NULL", {})
    gains: dict[int, float] = {}
    for node in nodes:
        gains[node["feature_id"]] = gains.get(node["feature_id"], 0.0) + node["gain"]
    top = browse.fetch_json(server.query_url("top_features", {"label": "VP"}, ".json"))
    assert len(top) == len(gains) > 1
    assert [r["feature_id"] for r in top][:3] == sorted(gains, key=lambda f: (-gains[f], f))[:3]
    assert top[0]["rank"] == 1 and top[0]["total_gain"] == pytest.approx(max(gains.values()))
    assert sum(r["pct_of_label_gain"] for r in top) == pytest.approx(100, abs=0.05 * len(top))
    assert top[0]["feature"] == rows_of(calibrated_db, "SELECT text FROM features WHERE id = :id",
                                        {"id": top[0]["feature_id"]})[0]["text"]


def test_calibration_points_are_the_calibrations_scores(server: browse.Server, calibrated_db: Path) -> None:
    report = api.calibrate(calibrated_db, thetas=[5.0, 3.0], settings=api.calibration_settings(calibrated_db,
                                                                                                beam=10))
    assert all(p.resumed for p in report.points)  # read back: nothing parsed or written again
    points = browse.fetch_json(server.query_url("calibration_points", {"calibration": "1"}, ".json"))
    assert [(p["theta"], p["f1"], p["trees"], p["beam"]) for p in points] == [
        (p.theta, p.f1, p.trees, 10) for p in sorted(report.points, key=lambda p: -p.theta)]
    assert [p["theta"] for p in points if p["best"]] == [report.best_theta]
    assert browse.fetch_json(server.query_url("calibration_points", {"calibration": "2"}, ".json")) == []


def test_label_status_is_clparse_status(server: browse.Server, calibrated_db: Path) -> None:
    rows = browse.fetch_json(server.query_url("label_status", {"state": ""}, ".json"))
    assert [(r["label"], r["iteration"], r["theta"], r["splits"], r["state"]) for r in rows] == [
        (s.label, s.iteration, s.theta, s.splits, s.state) for s in api.status(calibrated_db)]
    stopped = browse.fetch_json(server.query_url("label_status", {"state": "stopped"}, ".json"))
    assert 0 < len(stopped) and {r["state"] for r in stopped} == {"stopped"}


def test_a_write_through_datasette_fails(server: browse.Server, calibrated_db: Path) -> None:
    before = rows_of(calibrated_db, "SELECT count(*) AS n FROM labels", {})
    # Datasette lets a WITH statement through its own SELECT check: SQLite itself must refuse it
    for sql in ("WITH x AS (SELECT 1) DELETE FROM labels", "DELETE FROM labels",
                "WITH x AS (SELECT 1) UPDATE labels SET name = 'X'"):
        status, body = get(f"{server.database_url}.json?" + urllib.parse.urlencode({"sql": sql}))
        assert status == 400, (sql, body)
    status, body = get(f"{server.database_url}.json?"
                       + urllib.parse.urlencode({"sql": "WITH x AS (SELECT 1) DELETE FROM labels"}))
    assert "readonly" in body
    served = json.loads(get(f"{server.url}/-/metadata.json")[1])["databases"][calibrated_db.stem]["queries"]
    assert not any(query.get("write") for query in served.values())  # no canned query may write
    assert rows_of(calibrated_db, "SELECT count(*) AS n FROM labels", {}) == before


def test_serving_writes_nothing_to_the_file_or_beside_it(calibrated_db: Path) -> None:
    before = state_of(calibrated_db)
    with browse.serving(calibrated_db) as running:
        for table in browse.table_descriptions():
            assert get(f"{running.database_url}/{table}")[0] == 200, table
        for name, query in browse.CANNED_QUERIES.items():
            assert get(running.query_url(name, query.example))[0] == 200, name
        get(f"{running.database_url}.json?sql=" + urllib.parse.quote("WITH x AS (SELECT 1) DELETE FROM runs"))
        assert state_of(calibrated_db) == before  # while it serves, too
    assert state_of(calibrated_db) == before


# ----------------------------------------------------------------------------- the command


def clparse(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLPARSE, *args], capture_output=True, text=True,
                          timeout=120, **kwargs)


@contextmanager
def browse_command(db: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    """`clparse browse` in a session of its own, killed with whatever is left of it at the end."""
    process = subprocess.Popen([CLPARSE, "browse", "--db", str(db), "--port", str(port)], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield process
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def hung_report(pid: int) -> str:
    """What a hung process and its children are doing (their state and kernel wait channel, from /proc)."""
    parts = []
    for task in [pid, *(int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]:
        with suppress(OSError):
            lines = Path(f"/proc/{task}/status").read_text().splitlines()
            status = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
            wchan = Path(f"/proc/{task}/wchan").read_text()
            signals = f"blocked {status.get('SigBlk')} ignored {status.get('SigIgn')}"
            parts.append(f"pid {task} {status.get('Name')} {status.get('State')} wchan {wchan} {signals}")
    return "; ".join(parts)


def refused(port: int) -> bool:
    """Nothing listens at the port any more (an HTTP error would still be an answer)."""
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/-/versions.json", timeout=5)
    except urllib.error.HTTPError:
        return False
    except urllib.error.URLError:
        return True
    return False


def test_command_serves_until_ctrl_c(calibrated_db: Path) -> None:
    port = browse.free_port()
    with browse_command(calibrated_db, port) as process:
        assert process.stdout is not None
        url = f"http://127.0.0.1:{port}/{calibrated_db.stem}"
        assert process.stdout.readline() == f"serving {calibrated_db} read-only at {url} (Ctrl-C stops)\n"
        assert get(f"{url}/training_curve.json?label=NP&_shape=array")[0] == 200
        process.send_signal(signal.SIGINT)  # to clparse alone (a terminal's Ctrl-C reaches its child too)
        # Datasette's own shutdown gets 10 s before it is killed; the margin is for a loaded machine
        try:
            status = process.wait(60)
        except subprocess.TimeoutExpired:  # say where it hangs: clparse's and Datasette's threads
            pytest.fail(f"clparse browse still runs 60 s after SIGINT: {hung_report(process.pid)}")
        assert status == 0
        assert refused(port)  # the Datasette child is gone with it


def test_a_killed_command_leaves_no_server(calibrated_db: Path) -> None:
    port = browse.free_port()
    with browse_command(calibrated_db, port) as process:
        assert process.stdout is not None and process.stdout.readline().startswith("serving ")
        process.kill()
        process.wait()
        deadline = time.monotonic() + 10  # the kernel sends the child SIGTERM; it takes a moment to go
        while not refused(port):
            assert time.monotonic() < deadline, "Datasette still serves after clparse browse was killed"
            time.sleep(0.1)


def test_check_fetches_every_canned_query_and_stops(calibrated_db: Path) -> None:
    result = clparse("browse", "--db", str(calibrated_db), "--port", "0", "--check")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(browse.CANNED_QUERIES)
    for line, name in zip(lines, browse.CANNED_QUERIES):
        pattern = rf"http://127\.0\.0\.1:\d+/{calibrated_db.stem}/{name}\.json\?\S+: [1-9]\d* rows"
        assert re.fullmatch(pattern, line)


def test_mistyped_db_gets_the_hint(calibrated_db: Path) -> None:
    typo = str(calibrated_db)[:-1]
    result = clparse("browse", "--db", typo)
    assert result.returncode == 1
    assert result.stderr == f"Error: {typo}: no such database; did you mean {calibrated_db}?\n"


def test_a_file_being_written_is_refused(copy_trained_db: Callable[[], Path]) -> None:
    db = copy_trained_db()
    writer = apsw.Connection(str(db))  # an open WAL connection that has written: a -wal beside the file
    try:
        writer.execute("CREATE TEMP TABLE t(x)")
        writer.execute("UPDATE runs SET seconds = seconds")
        assert Path(f"{db}-wal").exists()
        result = clparse("browse", "--db", db.name, "--port", "0", "--check", cwd=db.parent)
    finally:
        writer.close()
    assert result.returncode == 1
    assert result.stderr == (f"Error: {db.name}: {db.name}-wal is beside it, so it may be being written; "
                             f"browse a copy: clparse backup --db {db.name} COPY.sqlite\n")


def test_without_datasette_one_line_says_how_to_install_it(calibrated_db: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from click.testing import CliRunner

    from clparse.cli import main

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "datasette" else find_spec(name, *args))
    before = state_of(calibrated_db)
    done = CliRunner().invoke(main, ["browse", "--db", str(calibrated_db), "--port", "0", "--check"])
    assert done.exit_code == 1
    assert done.output == f"Error: {browse.INSTALL}\n"
    assert state_of(calibrated_db) == before
