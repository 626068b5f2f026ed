"""``clparse export``: a parser database, the part of a trained run that parsing needs, to hand on.

A run's database holds every training example (feature rows, each label's examples, margin
vectors): gigabytes that only training reads. The export is a database of the same schema (so
every reader, ``report``, ``sql`` and ``clparse check`` work on it unchanged) holding what parsing,
tagging, calibrating and reporting read: the run's settings, the dev sentences, the vocabulary, the
labels, the feature index, the boosting state and the trees and Θ of every iteration (any Θ̂
still works), the tagger and every calibration. Left out: ``feature_rows``, ``label_examples``,
``margin_checkpoints`` (empty tables), the margin vector in each ``label_training`` row (an empty
blob, ``margins_iteration`` 0, its checksum recomputed), and the training sentences with their
inference paths (what the examples were generated from; nothing an export supports reads them).

``runs.config_json`` gets an ``export`` key saying where the file came from (see
:func:`export_origin`); readers of the config read the keys they know, so no schema change was
needed. Training and preparing refuse an export (:func:`refuse_exported`). See docs/design.md.

The source is only read (one read transaction, one snapshot, opened as read-only commands open a
file: no ``-wal``/``-shm`` left behind, safe while training writes to it). The export is built under
a scratch name beside ``out``, checked (SQLite's integrity check, foreign keys, every checksum) and
only then linked into place: a failure or Ctrl-C leaves no partial file, and an existing ``out`` is
replaced only with ``force``. No user text is pasted into SQL: table and column names come from
:mod:`clparse.store.schema`, values are bound parameters.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from clparse.errors import DatabaseError
from clparse.store import blobs
from clparse.store.database import (
    Database,
    _place,
    _remove_dead_scratch,
    check_database,
    init_database,
    refuse_special_file,
    sqlite_error,
)
from clparse.store.engine import open_read_only
from clparse.store.stamps import now

#: Tables an export leaves empty: the training examples and the margins training keeps.
LEFT_OUT = ("feature_rows", "label_examples", "margin_checkpoints")
#: Tables an export keeps some rows of: the dev sentences only (calibrate parses them); the inference
#: paths belong to training sentences alone.
WHERE = {"sentences": ("split = ?", ("dev",)), "inference_paths": ("0", ())}
#: The key of ``runs.config_json`` that marks an export.
MARKER = "export"
#: What an export holds no longer, as its marker says.
WITHOUT = ["feature_rows", "label_examples", "margin_checkpoints", "label_training.margins_float64",
           "training sentences", "inference_paths"]

_BATCH = 10_000

Progress = Callable[[str, int], object]


@dataclass
class ExportSummary:
    """What :func:`export_parser` wrote: the two files' sizes, the rows copied and left out per table."""

    source: Path
    out: Path
    source_bytes: int
    out_bytes: int
    rows: dict[str, int] = field(default_factory=dict)  # rows copied, per table
    left_out: dict[str, int] = field(default_factory=dict)  # source rows not copied, per table
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        """The export's size as a fraction of the source's."""
        return self.out_bytes / self.source_bytes if self.source_bytes else 0.0


def export_origin(db: Database | str | Path) -> dict[str, Any] | None:
    """The ``export`` marker of a parser database (source, source_input_digest, source_bytes,
    clparse_version, exported_at, without), or None for a run's own database (or one without a run)."""
    database = Database.of(db, readonly=True)
    with database.raw() as connection:
        return _origin(connection)


def _origin(connection: apsw.Connection) -> dict[str, Any] | None:
    row = connection.execute("SELECT json_extract(config_json, '$.export') FROM runs").fetchone()
    if row is None or row[0] is None:
        return None
    try:
        origin = json.loads(str(row[0]))
    except ValueError:
        return {"source": "?"}
    return origin if isinstance(origin, dict) else {"source": "?"}


def refuse_exported(db: Database | str | Path, command: str) -> None:
    """Refuse ``command`` (``train``, ``prepare``) on a parser database: it holds no training examples."""
    database = Database.of(db, readonly=True)
    origin = export_origin(database)
    if origin is None:
        return
    source = origin.get("source", "?")
    advice = {"train": f"train the run it was exported from ({source}) and export it again",
              "prepare": "prepare a new run into a new database"}.get(command, f"use the run ({source})")
    raise DatabaseError(f"{database.path}: a parser exported from {source} by `clparse export`, without "
                        f"training examples: it cannot be used to {command}; {advice}")


def export_parser(source: str | Path, out: str | Path, *, force: bool = False,
                  progress: Progress | None = None, version: str | None = None) -> ExportSummary:
    """Write the parser database of the run ``source`` to the new file ``out`` (replaced if it exists
    only with ``force``); ``progress(table, rows)`` after each batch of rows copied; ``version``: the
    clparse version the marker names (default: the installed package's). Returns sizes and row counts."""
    start = time.perf_counter()
    source, out = Path(source), Path(out)
    check_database(source, upgrade=False)  # refuses a missing, foreign or newer file; an older one with
    # the `clparse init --db SOURCE` that upgrades it (export only reads its --db)
    _check_out(source, out, force)
    _remove_dead_scratch(out.parent, f".{out.name}.", ".exporting")
    scratch = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.exporting")
    summary = ExportSummary(source, out, source.stat().st_size, 0)
    try:
        _create(scratch, out, source)
        _copy(source, scratch, summary, progress or (lambda table, rows: None), version or _version())
        _verify(source, scratch)
        with open(scratch, "rb") as handle:
            os.fsync(handle.fileno())
        if force:
            os.replace(scratch, out)
        elif not _place(scratch, out):
            raise DatabaseError(f"{out}: already exists; choose a new name, or give --force to replace it")
    finally:
        for leftover in (scratch, *(Path(f"{scratch}{tail}") for tail in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)
    summary.out_bytes = out.stat().st_size
    summary.seconds = time.perf_counter() - start
    return summary


def _create(scratch: Path, out: Path, source: Path) -> None:
    """The empty export at ``scratch``, of the current schema as `clparse init` makes it. A directory it
    cannot be made in is named as ``out``'s (it was told as the source's error, naming the scratch file)."""
    try:
        init_database(scratch)
    except DatabaseError:
        raise
    except Exception as exc:
        if not isinstance(exc, OSError | apsw.Error) and type(exc).__module__.split(".")[0] != "sqlalchemy":
            raise
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        at = reason.find(scratch.name)  # SQLite's text ends with the scratch file's name: not the user's
        if at >= 0:
            reason = reason[:max(reason.rfind(": ", 0, at), 0)] or "cannot create a file"
        raise DatabaseError(f"{out}: cannot write the parser database there ({reason}); {source} is "
                            "unchanged") from None


def _check_out(source: Path, out: Path, force: bool) -> None:
    """Refuse an ``out`` that is the source, a directory, in a missing directory, or that exists (unless
    ``force``), or that another process has open (a log beside it would be read into the new file)."""
    if out.is_dir():
        raise DatabaseError(f"{out}: is a directory; give the new parser database's file name")
    refuse_special_file(out)  # --force would rename the export over a device such as /dev/full
    if not out.parent.is_dir():
        raise DatabaseError(f"{out.parent}: no such directory")
    if out.exists() and (out.resolve() == source.resolve() or os.path.samefile(out, source)):
        raise DatabaseError(f"{out}: the export must go to another file than the run {source}")
    companions = {Path(f"{source.resolve()}{tail}") for tail in ("-wal", "-shm", "-journal")}
    if out.resolve() in companions:  # with --force it replaced the run's log: committed work lost
        raise DatabaseError(f"{out}: is SQLite's own file beside the run {source}; give the export a name "
                            "of its own")
    if out.exists() and not force:
        raise DatabaseError(f"{out}: already exists; choose a new name, or give --force to replace it")
    for tail in ("-wal", "-journal"):
        if Path(f"{out}{tail}").exists():
            raise DatabaseError(f"{out}: {out.name}{tail} is beside it, so another process has it open (or "
                                "was killed writing it); close that first, then export again")


def _copy(source: Path, scratch: Path, summary: ExportSummary, progress: Progress, version: str) -> None:
    """Copy the parser's rows of ``source`` into the new database ``scratch`` in one transaction each side
    (one snapshot of the source), then compact it."""
    from clparse.store import reading, schema

    try:
        src = open_read_only(source)
    except apsw.Error as exc:
        raise sqlite_error(exc, source) from None
    try:
        dst = apsw.Connection(str(scratch), flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.Error as exc:
        src.close()
        raise sqlite_error(exc, summary.out) from None
    failed_on = source
    try:
        src.execute("BEGIN")  # one read transaction: a consistent snapshot while training writes
        reading.run(src, source)  # refuses a database without a prepared run
        origin = {"source": str(source.resolve()), "source_input_digest": _digest(src),
                  "source_bytes": summary.source_bytes, "clparse_version": version,
                  "exported_at": now(), "without": WITHOUT}
        dst.execute("PRAGMA foreign_keys = ON")
        dst.execute("PRAGMA synchronous = OFF")  # a scratch file: synced once, before it is put in place
        dst.execute("BEGIN")
        for table in schema.metadata.sorted_tables:  # parents before children
            name = table.name
            total = _count(src, name)
            if name in LEFT_OUT:
                summary.left_out[name] = total
                continue
            columns = [column.name for column in table.columns]
            where, args = WHERE.get(name, ("1", ()))
            rows = src.execute(f"SELECT {_names(columns)} FROM {_quote(name)} WHERE {where}", args)
            insert = (f"INSERT INTO {_quote(name)} ({_names(columns)}) "
                      f"VALUES ({', '.join('?' for _ in columns)})")
            copied = 0
            for batch in _batches(_rewritten(name, columns, rows, origin)):
                failed_on = summary.out
                dst.executemany(insert, batch)
                failed_on = source
                copied += len(batch)
                progress(name, len(batch))
            summary.rows[name] = copied
            if total > copied:
                summary.left_out[name] = total - copied
        failed_on = summary.out
        dst.execute("COMMIT")
        dst.execute("PRAGMA synchronous = FULL")
        dst.execute("VACUUM")
        dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except apsw.Error as exc:
        raise sqlite_error(exc, failed_on) from None
    finally:
        dst.close()
        src.close()


def _rewritten(table: str, columns: Sequence[str], rows: Iterator[tuple[Any, ...]],
               origin: Mapping[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The source's rows as the export stores them: the run marked, each label's margins emptied (and
    a label caught mid-training paused: nobody trains the export)."""
    if table == "runs":
        at = columns.index("config_json")
        for row in rows:
            config = json.loads(str(row[at]))
            config[MARKER] = dict(origin)
            yield (*row[:at], json.dumps(config, sort_keys=True), *row[at + 1:])
        return
    if table != "label_training":
        yield from rows
        return
    for row in rows:
        values = dict(zip(columns, row))
        values.update(margins_float64=b"", margins_iteration=0)
        values["margins_sha256"] = blobs.row_checksum("label_training", values)
        if values["state"] == "training":
            values.update(state="paused", pid=None,
                          message=f"exported while training at iteration {values['iteration']}")
        yield tuple(values[c] for c in columns)


def _verify(source: Path, scratch: Path) -> None:
    """The export is whole before it is put in place: SQLite's integrity check, every foreign key, no
    training example, and every copied tree and blob against its checksum (a damaged source row is
    named as the source's)."""
    from clparse.store.database import integrity_check
    from clparse.store.verify import damaged, verify_checksums

    integrity_check(scratch)
    connection = open_read_only(scratch)
    try:
        broken = connection.execute("PRAGMA foreign_key_check").fetchall()
        examples = sum(_count(connection, name) for name in LEFT_OUT)
    finally:
        connection.close()
    if broken or examples:
        raise DatabaseError(f"{scratch}: the export came out inconsistent ({len(broken)} broken references, "
                            f"{examples} example rows); nothing was written to {source}")
    problems = verify_checksums(scratch)
    if problems:
        raise damaged(source, problems)


def _version() -> str:
    """The installed clparse's version (storage imports nothing of clparse above it)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("clparse")
    except PackageNotFoundError:
        return "unknown"


def _digest(connection: apsw.Connection) -> str:
    row = connection.execute("SELECT input_digest FROM runs").fetchone()
    return "" if row is None else str(row[0])


def _count(connection: apsw.Connection, table: str) -> int:
    return int(connection.execute(f"SELECT count(*) FROM {_quote(table)}").fetchall()[0][0])  # type: ignore[arg-type]


def _quote(name: str) -> str:
    """An identifier of clparse's schema, quoted (never user text)."""
    return '"' + name.replace('"', '""') + '"'


def _names(columns: Sequence[str]) -> str:
    return ", ".join(_quote(c) for c in columns)


def _batches(rows: Iterator[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


__all__ = ["ExportSummary", "LEFT_OUT", "export_origin", "export_parser", "refuse_exported"]
