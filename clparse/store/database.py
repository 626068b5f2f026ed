"""Create, recognize, upgrade and open clparse databases.

A clparse database is a SQLite file with ``PRAGMA application_id`` =
:data:`~clparse.store.engine.APPLICATION_ID` and an ``alembic_version`` row.
Opening checks both: a file that is not SQLite or not clparse's is refused,
a newer schema is refused, an older one is upgraded after a backup copy.
Nothing is written to a file that is refused (except that SQLite rolls back a hot journal, an
interrupted write's, before anything can read the file at all: see :func:`_inspect`).

Creating is exclusive (:func:`init_database`), an upgrade is one transaction (:func:`_migrate`),
and a backup never overwrites another (:func:`_backup_before_upgrade`).
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from clparse.errors import DatabaseError
from clparse.store import dbapi
from clparse.store.engine import (APPLICATION_ID, BUSY_TIMEOUT_MS, make_engine, mode_of, open_read_only,
                                  writable)

if TYPE_CHECKING:
    import sqlalchemy
    from alembic.config import Config

SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_DB = Path("db/clparse.sqlite")


def migrations_dir() -> Path:
    """The Alembic script directory (``env.py``, ``versions/``).

    Installed from a wheel it is ``clparse/migrations/`` (``pyproject.toml`` maps the repository's
    ``migrations/`` there); in a checkout, editable install or not, it is ``migrations/`` beside
    ``clparse/`` and ``pyproject.toml`` (never a stranger's top-level ``migrations`` in site-packages).
    Found by path rather than by import, so an editable install made before the mapping still works.
    """
    from importlib.resources import files

    package = Path(str(files("clparse")))
    checkout = package.parent / "migrations" if (package.parent / "pyproject.toml").is_file() else None
    for candidate in (package / "migrations", checkout):
        if candidate is not None and (candidate / "env.py").is_file() and (candidate / "versions").is_dir():
            return candidate
    raise DatabaseError(f"clparse's schema migrations are missing: neither {package / 'migrations'} (an "
                        f"installed clparse) nor a checkout's migrations/ beside {package}")


def _alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    return config


_REVISION = re.compile(r"""^(down_revision|revision)\s*(?::[^=]*)?=\s*(?:["'](\w+)["']|None)""", re.MULTILINE)


def known_revisions() -> list[str]:
    """Schema revisions this clparse knows, oldest first.

    Read from the migration files' ``revision`` / ``down_revision`` lines rather than through
    Alembic, whose import costs every command a tenth of a second; a test checks both agree.
    """
    parents: dict[str, str | None] = {}
    for path in (migrations_dir() / "versions").glob("*.py"):
        found = {m.group(1): m.group(2) for m in _REVISION.finditer(path.read_text(encoding="utf-8"))}
        if revision := found.get("revision"):
            parents[revision] = found.get("down_revision")
    order: list[str] = []
    children = {parent: child for child, parent in parents.items()}
    current = children.get(None)
    while current is not None:
        order.append(current)
        current = children.get(current)
    if len(order) != len(parents):  # a branch or a gap: let Alembic, which knows every case, decide
        from alembic.script import ScriptDirectory

        script = ScriptDirectory.from_config(_alembic_config())
        return [rev.revision for rev in reversed(list(script.walk_revisions()))]
    return order


def _inspect(path: Path) -> tuple[int, str | None]:
    """(application_id, schema revision or None) of an existing SQLite file, read without writing.

    The file is opened as read-only commands open it (:func:`~clparse.store.engine.open_read_only`:
    read-only media too). One thing is not read as it is: a *hot journal* (``NAME-journal`` left by
    a write killed in rollback-journal mode, which the old-schema files use until their first
    upgrade switches them to WAL, so a kill during that switch leaves one). The file's committed
    state is the file with that journal rolled back, which a read-only connection cannot do
    (SQLite says "attempt to write a readonly database"); it used to be reported as damage. If we
    may write the file, SQLite rolls the journal back, as any read-write open would (no committed
    data changes); otherwise the file is refused with that reason.
    """
    with open(path, "rb") as handle:
        header = handle.read(16)
    if header != SQLITE_HEADER:
        raise DatabaseError(f"{path}: not a SQLite database (unexpected file header); left untouched")
    try:
        return _identity(path)
    except apsw.ReadOnlyError as exc:
        if getattr(exc, "extendedresult", None) != apsw.SQLITE_READONLY_ROLLBACK or not writable(path):
            raise _unreadable(path, exc) from None
    except apsw.Error as exc:
        raise _unreadable(path, exc) from None
    try:
        recovering = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            recovering.set_busy_timeout(BUSY_TIMEOUT_MS)
            recovering.execute("SELECT count(*) FROM sqlite_master").fetchall()  # rolls the journal back
        finally:
            recovering.close()
        return _identity(path)
    except apsw.Error as exc:
        raise _unreadable(path, exc) from None


def _identity(path: Path) -> tuple[int, str | None]:
    connection = open_read_only(path)
    try:
        app_id = connection.execute("PRAGMA application_id").fetchall()[0][0]
        has_version = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).fetchall()[0][0]
        versions = connection.execute("SELECT version_num FROM alembic_version").fetchall() if has_version \
            else []
    finally:
        connection.close()
    revision = versions[0][0] if versions else None
    return int(app_id), None if revision is None else str(revision)  # type: ignore[arg-type]


def _unreadable(path: Path, exc: apsw.Error) -> DatabaseError:
    """One line for a file that could not even be looked at, naming the reason rather than guessing
    damage: locked, unreadable, on read-only media with a log that cannot be read, or damaged."""
    code = getattr(exc, "extendedresult", None)
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return sqlite_error(exc, path)
    if code == apsw.SQLITE_READONLY_ROLLBACK:
        return DatabaseError(f"{path}: a write to it was interrupted and {path}-journal must be rolled back "
                             "before it can be read, which needs write access to the file and its directory; "
                             "left untouched")
    if isinstance(exc, apsw.ReadOnlyError | apsw.CantOpenError | apsw.PermissionsError):
        if not os.access(path, os.R_OK):
            return DatabaseError(f"{path}: no permission to read it; left untouched")
        if Path(f"{path}-wal").exists() and not writable(path):
            return DatabaseError(f"{path}: a write-ahead log {path}-wal is beside it on read-only media or "
                                 "in a read-only directory, and SQLite cannot read that log without a "
                                 f"readable {path}-shm there ({exc}); copy the files to a writable place; "
                                 "left untouched")
        return DatabaseError(f"{path}: cannot open it to read ({exc}); left untouched")
    return DatabaseError(f"{path}: cannot read the database ({exc}); it may be damaged; left untouched")


def init_database(path: str | Path = DEFAULT_DB, echo: Callable[[str], object] = lambda _: None) -> Path:
    """Create a new database at ``path`` or bring an existing clparse database up to date.

    Creating is exclusive. The new database is built under a name of its own (pid and random
    suffix) and only then put in place with ``os.link``, which fails if the path exists: a second
    ``init`` or ``prepare`` started at the same moment on the same new path can never put an empty
    or half-built file there, nor replace the first one's database. The one that comes second does
    what it would have done a moment later: it finds the finished database and uses it (checked and
    brought up to date like any existing one), saying "created by another process at the same
    time". That is what a user expects of ``init`` ("create, or bring up to date") and of
    ``prepare`` on a new path, and it is what happens anyway when the two are a second apart, so
    being a millisecond apart changes nothing; only the one that created it says "created".
    """
    _create_or_update(Path(path), echo)
    return Path(path)


def _create_or_update(path: Path, echo: Callable[[str], object]) -> bool:
    """:func:`init_database`; True if this call created the file."""
    refuse_special_file(path)
    if path.exists() and path.stat().st_size > 0:
        check_database(path, echo=echo, upgrade=True)
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_scratch(path.parent, f".{path.name}.", ".creating")
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.creating")
    try:
        _migrate(scratch, fresh=True)  # closed again: the log is folded in, the scratch file is complete
        placed = _place(scratch, path)
    finally:
        for leftover in (scratch, Path(f"{scratch}-wal"), Path(f"{scratch}-shm"), Path(f"{scratch}-journal")):
            leftover.unlink(missing_ok=True)
    if placed:
        echo(f"created {path} (schema {known_revisions()[-1]})")
        return True
    echo(f"{path} was created by another process at the same time; using it")
    check_database(path, echo=echo, upgrade=True)
    return False


def refuse_special_file(path: Path) -> None:
    """A database is a regular file. A device, pipe or socket at ``path`` (``/dev/null`` is empty, so it
    looked like a file to create over) would be replaced by the rename that puts a new database in place."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise DatabaseError(f"{path}: not a regular file (a device, pipe or socket); give a database file's "
                            "name")


def _place(scratch: Path, path: Path) -> bool:
    """Put the finished ``scratch`` at ``path`` unless another process put its own there first.

    ``os.link`` creates ``path`` only if it does not exist (atomically, also against other hosts on
    NFS). An empty file at ``path`` (``touch``) is replaced, one process at a time (a lock on the
    directory, which the kernel drops if the process dies), and only while it is still empty.
    """
    try:
        os.link(scratch, path)
        return True
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: the same, under the directory lock
        pass
    with _directory_lock(path.parent):
        if path.exists() and path.stat().st_size > 0:
            return False
        os.replace(scratch, path)
        return True


@contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory`` (where there is one), released when the block ends or the
    process dies."""
    try:
        import fcntl
    except ImportError:  # not POSIX: os.link alone
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # drops the lock


def _remove_dead_scratch(directory: Path, prefix: str, suffix: str) -> None:
    """Remove scratch files ``PREFIX<pid>.<random>SUFFIX`` (and their -wal/-shm/-journal) whose process
    no longer runs: what a creator or backup killed with ``kill -9`` left behind. A live one is left alone."""
    for leftover in directory.glob(f"{prefix}*"):
        rest = leftover.name[len(prefix):]
        base = rest
        for tail in ("-wal", "-shm", "-journal"):
            base = base.removesuffix(tail)
        if not base.endswith(suffix):
            continue
        pid = base[:-len(suffix)].split(".")[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


@contextmanager
def new_or_existing(path: str | Path, echo: Callable[[str], object] = lambda _: None,
                    warn: Callable[[str], object] = lambda _: None) -> Iterator[bool]:
    """Create the database if missing (yields whether it was created); if the block then fails, a database
    created here is removed again, so a failed first command leaves no empty database behind."""
    path = Path(path)
    new_dirs = [d for d in path.absolute().parents if not d.exists()]  # init_database makes them
    # Whether *this* call created it (not whether it was missing a moment ago): a database that a
    # racing process created is never removed here.
    created = _create_or_update(path, echo)
    try:
        yield created
    except BaseException:
        if created:
            for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
                leftover.unlink(missing_ok=True)
            for directory in new_dirs:  # deepest first; only if still empty
                try:
                    directory.rmdir()
                except OSError:
                    break
            warn(f"removed {path} again: this command created it and did not finish")
        raise


def missing_hint(path: Path) -> str:
    """What to tell about a --db path that is not there: the nearest database file beside it (a typo is the
    likelier mistake than a run not made yet), or how to make one."""
    import difflib

    if path.parent.is_dir():
        stems = {p.stem: p for p in path.parent.glob("*.sqlite")}
        near = difflib.get_close_matches(path.stem, list(stems), n=1, cutoff=0.75)
        if near:
            return f"did you mean {stems[near[0]]}?"
    return f"check the path, or make a run with `clparse prepare --db {path} ...` (or `clparse init`)"


def check_database(path: str | Path, *, upgrade: bool = True, echo: Callable[[str], object] = lambda _: None,
                   allow_older: bool = False) -> str:
    """Refuse foreign, damaged or newer files; upgrade older ones (after a backup). Return the revision.

    With ``allow_older`` an older schema is accepted as it is (for commands that only copy the file).
    """
    path = Path(path)
    if not path.exists():
        raise DatabaseError(f"{path}: no such database; {missing_hint(path)}")
    if path.is_dir():  # open() raised a raw IsADirectoryError
        raise DatabaseError(f"{path}: a directory, not a database file; give the path of the .sqlite file")
    app_id, revision = _inspect(path)
    if app_id != APPLICATION_ID or revision is None:
        raise DatabaseError(f"{path}: a SQLite file, but not a clparse database; left untouched")
    revisions = known_revisions()
    if revision not in revisions:
        raise DatabaseError(f"{path}: schema {revision} is newer than this clparse knows ({revisions[-1]}); "
                            "upgrade clparse to open it; left untouched")
    if revision != revisions[-1] and not allow_older:
        if not upgrade:
            # `clparse init` alone made a new db/clparse.sqlite and left this file as it was
            init = f"clparse init --db {shlex.quote(str(path))}"
            raise DatabaseError(f"{path}: schema {revision} is older than {revisions[-1]}, and this command "
                                f"only reads it; upgrade it with `{init}` (a backup copy is kept beside it)")
        backup = _backup_before_upgrade(path, revision)
        echo(f"upgrading {path} from schema {revision} to {revisions[-1]}; backup at {backup}")
        _migrate(path, fresh=False)
        revision = revisions[-1]
    return revision


def _backup_before_upgrade(path: Path, revision: str) -> Path:
    """A copy of ``path`` as ``NAME.schema-REV.bak``, or ``NAME.schema-REV.1.bak``, ``.2.bak``, ... if that is
    taken: an earlier backup is never overwritten (nor written into: a partial one from a killed
    upgrade made the backup API fail, and the database itself was then called damaged). The copy is
    made under a scratch name and linked into place, so a kill leaves no partial ``.bak``."""
    _remove_dead_scratch(path.parent, f".{path.name}.schema-{revision}.", ".bak-copying")
    unique = f"{os.getpid()}.{secrets.token_hex(4)}"
    scratch = path.with_name(f".{path.name}.schema-{revision}.{unique}.bak-copying")
    try:
        try:
            _backup(path, scratch)
        except apsw.Error as exc:
            raise sqlite_error(exc, scratch if isinstance(exc, apsw.FullError) else path) from None
        for n in range(10_000):
            backup = path.with_name(f"{path.name}.schema-{revision}{f'.{n}' if n else ''}.bak")
            try:
                os.link(scratch, backup)
                return backup
            except FileExistsError:
                continue
        raise DatabaseError(f"{path}: 10000 backups {path.name}.schema-{revision}.*.bak already exist; "
                            "remove some")
    finally:
        for leftover in (scratch, Path(f"{scratch}-journal"), Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
            leftover.unlink(missing_ok=True)


def checkpoint_wal(path: str | Path) -> None:
    """Fold the write-ahead log into the database file, so a plain copy of the file is complete."""
    try:
        connection = apsw.Connection(str(path))
        connection.set_busy_timeout(2_000)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        connection.close()
    except apsw.Error:
        pass  # best effort: readers may hold the log; it is folded in later anyway


def _backup(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API (safe while others use the file)."""
    src = open_read_only(source)
    dst = apsw.Connection(str(target))
    try:
        # One step copies every page inside one read transaction: a consistent snapshot, and in WAL
        # mode a reader never blocks the writers (training goes on while the copy is made).
        with dst.backup("main", src, "main") as job:
            job.step(-1)
    finally:
        dst.close()
        src.close()


def backup_database(source: str | Path, target: str | Path) -> int:
    """Copy a clparse database to a new file ``target``, consistently, even while training writes to it.

    The copy is written under a temporary name and renamed into place, so a failure (full disk,
    Ctrl-C) leaves no partial file; an existing ``target`` is refused. Returns the size in bytes.
    """
    source, target = Path(source), Path(target)
    check_database(source, upgrade=False, allow_older=True)
    if target.exists():
        raise DatabaseError(f"{target}: already exists; choose a new name (a backup never overwrites)")
    if target.resolve() == source.resolve():
        raise DatabaseError(f"{target}: the backup must go to another file than {source}")
    if not target.parent.is_dir():
        raise DatabaseError(f"{target.parent}: no such directory")
    # A scratch name of this copy's own (two backups to one name wrote into one shared scratch file), put
    # in place by a link that fails if the name was taken meanwhile (os.replace overwrote that file).
    _remove_dead_scratch(target.parent, f".{target.name}.", ".copying")
    scratch = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.copying")
    try:
        try:
            _backup(source, scratch)
        except apsw.Error as exc:
            raise _backup_error(exc, source, target) from None
        if not _place(scratch, target):
            raise DatabaseError(f"{target}: already exists (made while the copy ran); choose a new name (a "
                                "backup never overwrites)")
    finally:
        for leftover in (scratch, Path(f"{scratch}-journal"), Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
            leftover.unlink(missing_ok=True)
    return target.stat().st_size


def _backup_error(exc: apsw.Error, source: Path, target: Path) -> DatabaseError:
    """One line for a failed backup, naming the file at fault: the source was read fine by the checks
    before, so a file that cannot be made or written is the target (it was told as the source's error)."""
    if isinstance(exc, apsw.FullError):
        return DatabaseError(f"{target}: the disk is full; no backup was made and {source} is unchanged; "
                             "free space and run the command again")
    if isinstance(exc, apsw.CantOpenError | apsw.ReadOnlyError | apsw.PermissionsError):
        return DatabaseError(f"{target}: cannot write a file there ({exc}); no backup was made and {source} "
                             "is unchanged")
    return sqlite_error(exc, source)


def quick_check(path: str | Path, pragma: str = "quick_check", tables: Collection[str] | None = None) -> None:
    """Refuse a damaged database (``PRAGMA quick_check``) before anything is written into it.

    ``pragma="integrity_check"`` checks thoroughly (indexes against tables too; slower). ``tables``: check
    only these tables and their indexes (those of them the file has), as a command that reads nothing else
    needs: a parse from a 6 GB training database checked every page of its examples, 1.2 s warm and 10 s
    from a cold disk, before the first tree.
    """
    if pragma not in ("quick_check", "integrity_check"):
        raise ValueError(pragma)
    path = Path(path)
    check_database(path, upgrade=False, allow_older=True)
    try:
        connection = open_read_only(path)
        try:
            if tables is None:
                problems = [row[0] for row in connection.execute(f"PRAGMA {pragma}(3)")]
            else:
                problems = _table_problems(connection, pragma, tables)
        finally:
            connection.close()
    except apsw.Error as exc:
        raise sqlite_error(exc, path) from None
    if problems != ["ok"]:
        raise DatabaseError(f"{path}: {DAMAGED} ({pragma}: {problems[0]})")


def _table_problems(connection: apsw.Connection, pragma: str, tables: Collection[str]) -> list[str]:
    """The check of each of ``tables`` the file has, one at a time (SQLite takes one table name per
    pragma); ``["ok"]`` when every one passes. The names are the schema's own, read from the file, and
    only those of ``tables`` are quoted into the pragma."""
    present = [str(name) for (name,) in connection.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
    for name in present:
        if name in tables:
            quoted = '"' + name.replace('"', '""') + '"'
            try:
                problems = [str(row[0]) for row in connection.execute(f"PRAGMA {pragma}({quoted})")]
            except apsw.CorruptError as exc:  # a root page unreadable: a finding, as the whole check's
                return [f"table {name}: {exc}"]
            if problems != ["ok"]:
                return problems
    return ["ok"]


def integrity_check(path: str | Path) -> None:
    """``clparse check``: the thorough check (every page, every index entry)."""
    quick_check(path, "integrity_check")


#: What to do about a damaged file, said once for every place that finds one.
DAMAGED = ("the database is damaged; nothing was written to it; restore it from a backup "
           "(`clparse backup` makes one)")


def _sqlalchemy_error() -> type[Exception]:
    """SQLAlchemy's base error class (imported only once SQLAlchemy is: an error from it means it was)."""
    import sqlalchemy.exc

    return sqlalchemy.exc.SQLAlchemyError


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, the driver error SQLAlchemy wraps, and what either was raised from."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [getattr(e, "orig", None), e.__cause__]


def is_damage(exc: BaseException) -> bool:
    """Is this SQLite's report of a damaged file (so that nothing more may be written into it)?"""
    return any(isinstance(e, apsw.CorruptError | apsw.NotADBError) or "malformed" in str(e)
               or DAMAGED in str(e) for e in _causes(exc))


def is_full(exc: BaseException) -> bool:
    """Is this SQLite's report of a full disk (every other write would fail the same way)?"""
    return any(isinstance(e, apsw.FullError) or "database or disk is full" in str(e)
               or "disk is full" in str(e) for e in _causes(exc))


def describe(exc: BaseException, path: str | Path) -> str:
    """One line for any error: SQLite's through :func:`sqlite_error`, others as ``Type: message``."""
    if isinstance(exc, DatabaseError):
        return str(exc)
    if isinstance(exc, apsw.Error) or type(exc).__module__.startswith("sqlalchemy"):
        return str(sqlite_error(exc, path))
    return f"{type(exc).__name__}: {exc}"


def sqlite_error(exc: BaseException, path: str | Path) -> DatabaseError:
    """One line for a SQLite error met on ``path`` (APSW's or SQLAlchemy's wrapping of it)."""
    orig = getattr(exc, "orig", None) or exc  # SQLAlchemy keeps the driver's exception in .orig
    cause = getattr(orig, "__cause__", None)
    kinds = (orig, cause)
    if is_damage(exc) or isinstance(cause, apsw.CorruptError | apsw.NotADBError):
        return DatabaseError(f"{path}: {DAMAGED}")
    if is_full(exc) or isinstance(cause, apsw.FullError):
        return DatabaseError(f"{path}: the disk is full; the transaction in flight was rolled back, "
                             "everything committed before is intact; free space and run the command again")
    if any(isinstance(e, apsw.BusyError) for e in kinds) or "database is locked" in str(orig):
        return DatabaseError(f"{path}: the database stayed locked by another process for "
                             f"{BUSY_TIMEOUT_MS // 1000} s; try again")
    if any(isinstance(e, apsw.ReadOnlyError) for e in kinds):
        return DatabaseError(f"{path}: cannot write: the file or its directory is read-only")
    text = str(getattr(orig, "args", [orig])[0] if getattr(orig, "args", None) else orig).splitlines()[0]
    return DatabaseError(f"{path}: database error: {text}")


def _migrate(path: Path, *, fresh: bool, target: str = "head") -> None:
    """Run the Alembic migrations to ``target`` inside one write transaction: all of them or none.

    The transaction is begun on the SQLAlchemy connection as well as in SQLite (``BEGIN
    IMMEDIATE``, so concurrent callers serialize). That matters: Alembic knows SQLite's DDL as
    non-transactional and, on a connection *it* sees outside a transaction, commits after every
    migration, which committed the ``BEGIN IMMEDIATE`` after the first one and ran the rest in
    autocommit (DDL outside a transaction, one statement at a time): a kill in between left a half
    upgraded file, e.g. a batch copy ``_alembic_tmp_taggers`` beside the table, or a column added
    but the revision not recorded, which the next ``init`` could not finish ("duplicate column").
    On a connection already in a transaction Alembic commits nothing; SQLite's DDL is
    transactional, batch operations (a table copied, dropped and renamed) included, so the single
    COMMIT here is the one moment the file changes from the old schema to the new.
    """
    engine = make_engine(path)
    try:
        with engine.connect() as connection:
            raw: dbapi.Connection = connection.connection.dbapi_connection  # type: ignore[assignment]
            with connection.begin():
                raw.apsw.execute("BEGIN IMMEDIATE")
                if fresh:
                    raw.apsw.execute(f"PRAGMA application_id = {int(APPLICATION_ID)}")
                from alembic import command

                config = _alembic_config()
                config.attributes["connection"] = connection
                command.upgrade(config, target)
    finally:
        engine.dispose()


def open_engine(path: str | Path = DEFAULT_DB, *, readonly: bool = False) -> sqlalchemy.Engine:
    """An engine on a checked, up-to-date clparse database (inside ``store/``; others use
    :class:`Database`)."""
    check_database(path, upgrade=not readonly)
    return make_engine(path, readonly=readonly)


class Database:
    """One open clparse database: the schema checked once, one engine, one way to run a transaction.

    A command opens it once and hands it to the repositories it needs (``Runs``, ``TrainingStore``,
    ``Models``, ``Calibrations``, ``Taggers``). ``readonly`` opens the file read-only at the SQLite
    level and never upgrades it: nothing is written anywhere.
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, readonly: bool = False,
                 allow_older: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        # allow_older: a reader of tables every schema since has kept as they are (read-only)
        self.revision = check_database(self.path, upgrade=not readonly, allow_older=allow_older and readonly)
        # How a read-only connection opens the file, decided once, now (as the engine's connections do).
        self._mode = mode_of(self.path) if readonly else None
        self._engine: sqlalchemy.Engine | None = None

    @property
    def engine(self) -> sqlalchemy.Engine:
        """The SQLAlchemy engine, made on first use (reads through :meth:`raw` never import SQLAlchemy)."""
        if self._engine is None:
            self._engine = make_engine(self.path, readonly=self.readonly)
        return self._engine

    @classmethod
    def of(cls, db: Database | str | Path, *, readonly: bool = False, allow_older: bool = False) -> Database:
        """``db`` itself if already open, else the database at that path."""
        return db if isinstance(db, Database) else cls(db, readonly=readonly, allow_older=allow_older)

    @contextmanager
    def reading(self) -> Iterator[sqlalchemy.Connection]:
        """A connection for reads (one snapshot per statement; use :meth:`transaction` to write)."""
        with self._mapped(), self.engine.connect() as connection:
            yield connection

    @contextmanager
    def snapshot(self) -> Iterator[sqlalchemy.Connection]:
        """A connection for reads inside one read transaction: every statement sees the same snapshot. For
        reads that must agree with each other while a trainer commits (a checksum check reading a label's
        trees, then its iterations, saw a tree committed in between as damage)."""
        with self._mapped(), self.engine.connect() as connection:
            raw: dbapi.Connection = connection.connection.dbapi_connection  # type: ignore[assignment]
            raw.apsw.execute("BEGIN")
            try:
                yield connection
            finally:
                connection.rollback()  # ends the read transaction (nothing was written)

    @contextmanager
    def raw(self) -> Iterator[apsw.Connection]:
        """An APSW connection for reads in plain SQL, inside one read transaction (one snapshot for every
        statement), opened as the engine's connections are; SQLite errors leave as
        :class:`~clparse.errors.DatabaseError`. For reads that must start fast (loading a parser)."""
        with self._mapped():
            connection = dbapi.connect(self.path, readonly=self.readonly, busy_timeout_ms=BUSY_TIMEOUT_MS,
                                       immutable=self._mode == "immutable",
                                       query_only=self._mode == "query_only")
            try:
                connection.apsw.execute("BEGIN")  # ended by close (a read transaction: nothing to commit)
                yield connection.apsw
            finally:
                connection.close()

    @contextmanager
    def transaction(self, *, immediate: bool = False) -> Iterator[sqlalchemy.Connection]:
        """One transaction: committed if the block finishes, rolled back if it raises.

        ``immediate`` takes the write lock at the start (``BEGIN IMMEDIATE``), for a read-then-write
        that must not interleave with another writer (claiming a label). SQLite errors leave as
        :class:`~clparse.errors.DatabaseError` (one line, naming the file) with the driver's error
        as its cause.
        """
        with self._mapped():
            if not immediate:
                with self.engine.begin() as connection:
                    yield connection
                return
            with self.engine.connect() as connection:
                raw: dbapi.Connection = connection.connection.dbapi_connection  # type: ignore[assignment]
                raw.apsw.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                    connection.commit()
                except BaseException:
                    connection.rollback()
                    raise

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        try:
            yield
        except (apsw.Error, dbapi.Error) as exc:
            raise sqlite_error(exc, self.path) from exc
        except Exception as exc:
            if type(exc).__module__.startswith("sqlalchemy") and isinstance(exc, _sqlalchemy_error()):
                raise sqlite_error(exc, self.path) from exc
            raise

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
