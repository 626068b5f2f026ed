"""``clparse browse``: a training database in a web browser, through Datasette, strictly read-only.

Datasette (``pip install 'clparse[browse]'``) runs as a child process (``python -m datasette serve``):
it reads SQLite through Python's ``sqlite3``, which must never be loaded beside clparse's APSW in one
process (docs/schema.md). The file is opened with ``?immutable=1`` (``datasette serve -i``): SQLite then
opens it read-only, takes no locks and creates no ``-wal`` or ``-shm`` file, so nothing is written
anywhere. That is only sound while nobody writes the file, so a file with a ``-wal`` or ``-journal``
beside it (a trainer or another clparse command has it open, or a writer was killed) is refused with
the way out: browse a ``clparse backup`` of it.

The metadata Datasette shows (a description of every table and column) is made from the comments of
:mod:`clparse.store.schema`, the same source ``docs/schema.md`` is generated from, so it cannot drift from
the schema document; it reaches Datasette on its standard input (``--metadata -``), not through a file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clparse.errors import ConfigurationError, DatabaseError, ParameterError

INSTALL = "browse needs Datasette: pip install 'clparse[browse]' (or pip install 'datasette>=0.65')"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
#: Blob bytes one table page may read: Datasette reads every column of a page's rows, and its default of
#: 100 rows is gigabytes for feature_rows or margin_checkpoints of a GUM run (a chunk holds 35 MB).
PAGE_BYTES = 32_000_000
DATASETTE_PAGE = 100  # Datasette's default_page_size

#: alembic_version is Alembic's table, not declared in clparse.store.schema.
EXTRA_TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "alembic_version": ("The schema revision of the file (Alembic's bookkeeping; see the revisions in "
                        "docs/schema.md). One row.",
                        {"version_num": "The newest schema revision applied to the file, e.g. 0008."}),
}


@dataclass(frozen=True)
class CannedQuery:
    title: str
    description: str
    sql: str
    example: dict[str, str]  # parameter values that show something on the bundled sample (docs, --check)


# Every parameter is optional: Datasette binds a missing one as '' (never pasted into the SQL), and ''
# means "all", so each query's page shows rows before anything is typed.
CANNED_QUERIES: dict[str, CannedQuery] = {
    "training_curve": CannedQuery(
        "Training curve per label",
        "Θ, loss and splits by boosting iteration (one tree each): Θ^t only falls; loss_after is the "
        "training loss Σ m L(yQ) after tree t; total_splits counts the splits of trees 1..t.",
        """SELECT l.name AS label, i.iteration, i.theta, i.root_gain, i.loss_before, i.loss_after,
       i.splits, sum(i.splits) OVER (PARTITION BY i.label_id ORDER BY i.iteration) AS total_splits,
       i.leaves, i.depth, i.seconds, i.finished_at
FROM iterations AS i JOIN labels AS l ON l.id = i.label_id
WHERE :label = '' OR l.name = :label
ORDER BY l.name, i.iteration""",
        {"label": "NP"}),
    "top_features": CannedQuery(
        "Features that carry the most gain per label",
        "Per label, each feature its trees split on: the splits, their summed gain ΔZ, its share of the "
        "label's gain and its rank (1: the most gain).",
        """SELECT l.name AS label,
       rank() OVER (PARTITION BY l.name ORDER BY sum(n.gain) DESC) AS rank,
       n.feature_id, f.text AS feature, count(*) AS splits, sum(n.gain) AS total_gain,
       round(100.0 * sum(n.gain) / sum(sum(n.gain)) OVER (PARTITION BY l.name), 2) AS pct_of_label_gain,
       min(n.iteration) AS first_iteration
FROM tree_nodes AS n JOIN labels AS l ON l.id = n.label_id
JOIN features AS f ON f.run_id = l.run_id AND f.id = n.feature_id
WHERE n.feature_id IS NOT NULL AND (:label = '' OR l.name = :label)
GROUP BY l.name, n.feature_id
ORDER BY l.name, total_gain DESC, n.feature_id""",
        {"label": "NP"}),
    "calibration_points": CannedQuery(
        "Calibration points",
        "Every Θ̂ a calibration parsed the dev set at, with its search settings and scores (best = 1 "
        "marks the calibration's best Θ̂). calibration: a calibration id, or empty for all.",
        """SELECT p.calibration_id, json_extract(c.settings_json, '$.beam') AS beam,
       json_extract(c.settings_json, '$.tags') AS tags, p.theta, p.trees, p.splits, p.sentences,
       p.fallbacks, p.completions, p.recall, p.precision, p.f1, p.exact, p.seconds,
       p.theta = c.best_theta AS best
FROM calibration_points AS p JOIN calibrations AS c ON c.id = p.calibration_id
WHERE :calibration = '' OR p.calibration_id = :calibration
ORDER BY p.calibration_id, p.theta DESC""",
        {"calibration": "1"}),
    "label_calibration": CannedQuery(
        "Calibration per label",
        "One label's dev brackets and scores at every calibrated Θ̂ (empty label: every label).",
        """SELECT c.calibration_id, c.label, c.theta, c.gold, c.test, c.matched, c.recall, c.precision, c.f1
FROM calibration_labels AS c
WHERE :label = '' OR c.label = :label
ORDER BY c.calibration_id, c.label, c.theta DESC""",
        {"label": "NP"}),
    "label_status": CannedQuery(
        "Per-label status",
        "Where each label's training stands, as clparse status shows it (pending: never trained; a "
        "state 'training' whose process is gone is shown by clparse status as interrupted). state: "
        "pending, training, paused, stopped, converged, failed, or empty for all.",
        """SELECT l.name AS label, coalesce(t.state, 'pending') AS state,
       coalesce(t.iteration, 0) AS iteration, t.theta, coalesce(t.splits, 0) AS splits, t.loss,
       t.examples_per_second, t.updated_at, t.message, l.candidates, l.positives, l.examples
FROM labels AS l LEFT JOIN label_training AS t ON t.label_id = l.id
WHERE :state = '' OR coalesce(t.state, 'pending') = :state
ORDER BY l.name""",
        {"state": ""}),
    "tree": CannedQuery(
        "One tree, readable",
        "The nodes of one label's tree at one iteration: the feature each split tests, its gain, and each "
        "leaf's confidence κ.",
        """SELECT n.node, n.parent, n.depth, f.text AS split_on, n.gain, n.confidence AS kappa,
       n.true_child, n.false_child, n.examples, n.candidates
FROM tree_nodes AS n JOIN labels AS l ON l.id = n.label_id
LEFT JOIN features AS f ON f.run_id = l.run_id AND f.id = n.feature_id
WHERE l.name = :label AND n.iteration = :iteration
ORDER BY n.node""",
        {"label": "NP", "iteration": "1"}),
}


def table_descriptions() -> dict[str, tuple[str, dict[str, str]]]:
    """Per table: its description and each column's, from the schema's comments (docs/schema.md's source)."""
    from clparse.store.schema import metadata

    tables = {name: (table.comment or "", {c.name: c.comment or "" for c in table.columns})
              for name, table in metadata.tables.items()}
    return {**tables, **EXTRA_TABLES}


def page_sizes(db: str | Path) -> dict[str, int]:
    """Rows per page for each table whose rows average more than PAGE_BYTES / 100 bytes of blobs (read from
    the file, immutable: blob lengths come from the record headers, the blobs themselves are not read)."""
    from clparse.store.engine import open_read_only
    from clparse.store.schema import blob_columns

    sizes = {}
    connection = open_read_only(db, "immutable")
    try:
        for name, columns in blob_columns().items():
            if columns:
                lengths = " + ".join(f"coalesce(length({c}), 0)" for c in columns)
                (average,), = connection.execute(f"SELECT coalesce(avg({lengths}), 0) FROM {name}")
                rows = max(1, int(PAGE_BYTES // max(average, 1)))
                if average and rows < DATASETTE_PAGE:  # an empty table (no tagger net yet) pages as any
                    sizes[name] = rows
    finally:
        connection.close()
    return sizes


def database_name(db: str | Path) -> str:
    """The name Datasette gives the file (its stem), under which its metadata and queries go."""
    return Path(db).stem


def kind_of(db: str | Path) -> str:
    """What ``db`` is, as the page's description names it: a run's training database, a parser exported
    from one, or a combination (each holds the same tables, not all of them filled)."""
    from clparse.store.combinations import is_combination
    from clparse.store.export import export_origin

    if is_combination(db):
        return "parser combination database (made by `clparse combine`)"
    if export_origin(db) is not None:
        return "parser database (exported by `clparse export`)"
    return "training database"


def build_metadata(db: str | Path) -> dict[str, Any]:
    """Datasette's metadata for ``db``: descriptions of every table and column, the canned queries, and page
    sizes that keep a page of blob rows within PAGE_BYTES."""
    sizes = page_sizes(db)
    tables: dict[str, Any] = {}
    for name, (description, columns) in table_descriptions().items():
        tables[name] = {"description": description, "columns": columns}
        if name in sizes:
            tables[name]["size"] = sizes[name]
    queries = {name: {"title": q.title, "description": q.description, "sql": q.sql}
               for name, q in CANNED_QUERIES.items()}
    return {
        "title": f"clparse: {Path(db).name}",
        "description": (f"A clparse {kind_of(db)}, read-only. Every table and column is described on its "
                        "page; the canned queries below the tables show training curves, the features "
                        "with the most gain, calibrations and each label's status."),
        "about": "clparse schema (docs/schema.md)",
        "databases": {database_name(db): {"tables": tables, "queries": queries}},
    }


#: The child runs ``datasette serve`` after asking Linux to SIGTERM it when its parent dies, so a killed
#: ``clparse browse`` leaves no server behind (argv: parent pid, then Datasette's arguments).
_CHILD = ("import sys; from clparse.interrupt import die_with_parent; die_with_parent(int(sys.argv[1])); "
          "from datasette.cli import cli; cli(sys.argv[2:], prog_name='datasette')")


#: Rows Datasette returns of one query at most (its max_returned_rows): canned queries over a large run
#: need more than its default 1,000; a query cut there says so (``truncated``), which ``--check`` reports.
MAX_ROWS = 100_000


def datasette_command(db: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> list[str]:
    """The child process's command line (``datasette serve ...``); the metadata JSON goes to its stdin."""
    return [sys.executable, "-c", _CHILD, str(os.getpid()), "serve", "--immutable", os.path.abspath(db),
            "--metadata", "-", "--host", host, "--port", str(port),
            # canned queries over a large run (every iteration of every label) need more than 1 s / 1000 rows
            "--setting", "sql_time_limit_ms", "20000", "--setting", "max_returned_rows", str(MAX_ROWS),
            "--setting", "allow_download", "off", "--setting", "suggest_facets", "off"]


def require_datasette() -> None:
    """One line saying how to install Datasette when it is missing (found without importing it: it would
    load Python's sqlite3 into this process)."""
    if importlib.util.find_spec("datasette") is None:
        raise ConfigurationError(INSTALL)


def check_browsable(db: str | Path) -> None:
    """Refuse what Datasette could not show read-only: no such file, not a clparse database of this schema,
    a file being written (a ``-wal`` or ``-journal`` beside it), a path its URI cannot hold."""
    from clparse.store.database import check_database

    db = Path(db)
    for suffix in ("-wal", "-journal"):  # first: check_database would roll a hot journal back
        if db.exists() and Path(f"{db}{suffix}").exists():
            raise DatabaseError(f"{db}: {db.name}{suffix} is beside it, so it may be being written; browse a "
                                f"copy: clparse backup --db {db} COPY.sqlite")
    check_database(db, upgrade=False)  # the missing-file hint; foreign, newer and older files
    if any(c in os.path.abspath(db) for c in "?#%"):
        raise DatabaseError(f"{db}: Datasette cannot open a path holding ?, # or %; rename or link it")


def free_port(host: str = DEFAULT_HOST) -> int:
    """A port nobody listens on at ``host`` now (the kernel's pick)."""
    with socket.socket(_family(host)) as probe:
        try:
            probe.bind((host, 0))
        except OSError as exc:
            raise _bind_error(exc, host, 0) from None
        return int(probe.getsockname()[1])


def _bind_error(exc: OSError, host: str, port: int) -> ParameterError:
    """A failed bind told as the option at fault: a port in use or reserved is --port's, anything else
    (a name that does not resolve, an address not of this machine) --host's (it was told as --port's, or
    without naming either)."""
    import errno

    if exc.errno in (errno.EADDRINUSE, errno.EACCES):
        return ParameterError("port", f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port "
                                      "(0: any free one)")
    return ParameterError("host", f"cannot listen on {host} ({exc.strerror or exc}); give an address of this "
                                  "machine (127.0.0.1; 0.0.0.0: every interface)")


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _check_port(host: str, port: int) -> None:
    """A clear error before Datasette starts when the port is taken (its own is a bind traceback in a log)."""
    with socket.socket(_family(host)) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise _bind_error(exc, host, port) from None


def tilde(name: str) -> str:
    """A database name as it appears in Datasette's URLs (its tilde encoding)."""
    safe = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
    return "".join(chr(b) if chr(b) in safe else "+" if b == 0x20 else f"~{b:02X}"
                   for b in name.encode("utf-8"))


@dataclass
class Server:
    """A running Datasette child process serving one database."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    database: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def database_url(self) -> str:
        return f"{self.url}/{tilde(self.database)}"

    def query_url(self, name: str, params: dict[str, str] | None = None, fmt: str = "",
                  shape: str = "array") -> str:
        """The URL of a canned query (``fmt`` ".json" for its rows as JSON: ``shape`` "array" a list of
        rows, "objects" Datasette's answer whose ``truncated`` says whether MAX_ROWS cut the rows)."""
        from urllib.parse import urlencode

        query = {**(params or {}), **({"_shape": shape} if fmt == ".json" else {})}
        return f"{self.database_url}/{name}{fmt}" + (f"?{urlencode(query)}" if query else "")

    def wait_until_ready(self, timeout: float = 60.0) -> None:
        """Return once the server answers HTTP; one line if the process ends or stays silent first."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.process.poll()
            if status is not None:
                raise ConfigurationError(f"datasette stopped with exit status {status} before it served "
                                         f"{self.url} (its message is above)")
            try:
                with urllib.request.urlopen(f"{self.url}/-/versions.json", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise ConfigurationError(f"datasette did not answer at {self.url} within {timeout:.0f} s")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(db: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
          quiet: bool = False) -> Server:
    """Check ``db`` and start Datasette on it (``port`` 0: any free one); ``quiet`` hides its log. The caller
    stops the server (:meth:`Server.stop`, or use :func:`serving`); on Linux it also ends when the thread
    that started it does."""
    require_datasette()
    check_browsable(db)
    if not 0 <= port <= 65535:
        raise ParameterError("port", f"{port}: give a port from 0 (any free one) to 65535")
    port = free_port(host) if port == 0 else port
    _check_port(host, port)
    # its log (uvicorn writes each request to stdout) goes to stderr: stdout is for our own lines
    process = subprocess.Popen(datasette_command(db, host, port), stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL if quiet else 2,
                               stderr=subprocess.DEVNULL if quiet else None)
    assert process.stdin is not None
    try:
        process.stdin.write(json.dumps(build_metadata(db)).encode())
        process.stdin.close()  # Datasette reads its metadata to the end at startup
    except BrokenPipeError:
        pass  # it died first: wait_until_ready says so
    return Server(process, host, port, database_name(db))


@contextmanager
def serving(db: str | Path, host: str = DEFAULT_HOST, port: int = 0, *, quiet: bool = True,
            timeout: float = 60.0) -> Iterator[Server]:
    """A Datasette server on ``db`` that answers, for the length of the block (from Python, tests)."""
    server = start(db, host, port, quiet=quiet)
    try:
        server.wait_until_ready(timeout)
        yield server
    finally:
        server.stop()


def fetch_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def check(db: str | Path, host: str = DEFAULT_HOST, port: int = 0) -> list[tuple[str, int, bool]]:
    """Start the server, fetch every canned query (with its example parameters) as JSON, stop: (URL, rows
    returned, whether Datasette cut them at :data:`MAX_ROWS`) per query. A query that fails is an error
    naming it."""
    results = []
    with serving(db, host, port) as server:
        for name, query in CANNED_QUERIES.items():
            url = server.query_url(name, query.example, ".json", shape="objects")
            try:
                answer = fetch_json(url)
            except urllib.error.HTTPError as exc:
                raise ConfigurationError(f"{url}: HTTP {exc.code} {exc.reason}") from None
            results.append((url, len(answer["rows"]), bool(answer.get("truncated"))))
    return results
