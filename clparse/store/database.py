"""Create, recognize, upgrade and open clparse databases.

A clparse database is a SQLite file with ``PRAGMA application_id`` =
:data:`~clparse.store.schema.APPLICATION_ID` and an ``alembic_version`` row.
Opening checks both: a file that is not SQLite or not clparse's is refused,
a newer schema is refused, an older one is upgraded after a backup copy.
Nothing is written to a file that is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import apsw
import sqlalchemy
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from clparse.errors import DatabaseError
from clparse.store import dbapi
from clparse.store.engine import BUSY_TIMEOUT_MS, make_engine
from clparse.store.schema import APPLICATION_ID

SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_DB = Path("db/clparse.sqlite")


def _alembic_config() -> Config:
    import migrations  # shipped beside clparse in the wheel

    config = Config()
    config.set_main_option("script_location", str(Path(list(migrations.__path__)[0])))
    return config


def known_revisions() -> list[str]:
    """Schema revisions this clparse knows, oldest first."""
    script = ScriptDirectory.from_config(_alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


def _inspect(path: Path) -> tuple[int, str | None]:
    """(application_id, schema revision or None) of an existing SQLite file, opened read-only."""
    with open(path, "rb") as handle:
        header = handle.read(16)
    if header != SQLITE_HEADER:
        raise DatabaseError(f"{path}: not a SQLite database (unexpected file header); left untouched")
    try:
        connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
        app_id = connection.execute("PRAGMA application_id").fetchall()[0][0]
        has_version = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'").fetchall()[0][0]
        revision = connection.execute("SELECT version_num FROM alembic_version").fetchall()[0][0] \
            if has_version else None
        connection.close()
    except apsw.Error as exc:
        raise DatabaseError(f"{path}: cannot read the database ({exc}); it may be damaged; left untouched") from None
    return app_id, revision


def init_database(path: str | Path = DEFAULT_DB, echo: Callable[[str], object] = lambda _: None) -> Path:
    """Create a new database at ``path`` or bring an existing clparse database up to date."""
    path = Path(path)
    if path.exists() and path.stat().st_size > 0:
        check_database(path, echo=echo, upgrade=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    # Build the new database under a temporary name and rename it into place: a failure leaves no file behind.
    scratch = path.with_name(f".{path.name}.creating")
    for leftover in (scratch, Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
        leftover.unlink(missing_ok=True)
    try:
        _migrate(scratch, fresh=True)
        os.replace(scratch, path)
    finally:
        for leftover in (scratch, Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
            leftover.unlink(missing_ok=True)
    echo(f"created {path} (schema {known_revisions()[-1]})")
    return path


def check_database(path: str | Path, *, upgrade: bool = True, echo: Callable[[str], object] = lambda _: None) -> str:
    """Refuse foreign, damaged or newer files; upgrade older ones (after a backup). Return the revision."""
    path = Path(path)
    if not path.exists():
        raise DatabaseError(f"{path}: no such database; create it with `clparse init --db {path}`")
    app_id, revision = _inspect(path)
    if app_id != APPLICATION_ID or revision is None:
        raise DatabaseError(f"{path}: a SQLite file, but not a clparse database; left untouched")
    revisions = known_revisions()
    if revision not in revisions:
        raise DatabaseError(f"{path}: schema {revision} is newer than this clparse knows ({revisions[-1]}); "
                            "upgrade clparse to open it; left untouched")
    if revision != revisions[-1]:
        if not upgrade:
            raise DatabaseError(f"{path}: schema {revision} is older than {revisions[-1]}; run `clparse init`")
        backup = path.with_name(f"{path.name}.schema-{revision}.bak")
        _backup(path, backup)
        echo(f"upgrading {path} from schema {revision} to {revisions[-1]}; backup at {backup}")
        _migrate(path, fresh=False)
    return revisions[-1]


def _backup(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API (safe while others use the file)."""
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(target))
    with dst.backup("main", src, "main") as job:
        job.step()
    dst.close()
    src.close()


def _migrate(path: Path, *, fresh: bool, target: str = "head") -> None:
    """Run the Alembic migrations to ``target`` inside one write transaction (so concurrent callers serialize)."""
    engine = make_engine(path)
    with engine.connect() as connection:
        raw: dbapi.Connection = connection.connection.dbapi_connection  # type: ignore[assignment]
        raw.apsw.execute("BEGIN IMMEDIATE")
        if fresh:
            raw.apsw.execute(f"PRAGMA application_id = {int(APPLICATION_ID)}")
        config = _alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, target)
        connection.commit()
        raw.commit()
    engine.dispose()


def open_engine(path: str | Path = DEFAULT_DB, *, readonly: bool = False) -> sqlalchemy.Engine:
    """An engine on a checked, up-to-date clparse database."""
    check_database(path, upgrade=not readonly)
    return make_engine(path, readonly=readonly)
