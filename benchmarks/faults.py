"""Random kills (SIGKILL) during `clparse init`, `prepare`, a schema upgrade and `train [--dask]` (issue 25).

Usage:
  nice .venv/bin/python benchmarks/faults.py [--rounds 5] [--dask-rounds 3] [--seed 0]
                                             [--scenarios init,prepare,upgrade,train-dask,train]
                                             [--workdir DIR] [--keep] [--json]

Every scenario first runs its command once uninterrupted: that run is the reference result, and its
wall time is the command's typical duration. Then, per round, the same command is started as a
real subprocess (`.venv/bin/clparse ...`, in a session of its own), killed with SIGKILL (the whole
process group: the command and any worker it started) at a moment drawn uniformly between 0 and
that duration (seeded), and started again to completion (the resume). The round then checks:

* init: a new path. The re-run exits 0, `clparse check` passes, the file holds the newest schema
  (every table and index exactly as the reference's) and no scratch file (`.NAME.*.creating`) is
  left. Row `init-race`: two `init` started at the same moment on one new path both exit 0 and
  leave one database (and nothing else) that passes the same checks.
* upgrade: a copy of an old-schema database of tests/data/old_schemas/ (a seeded pick among
  schema-0001 .. the newest old one), upgraded by `clparse init`. After the kill the file (opened in
  a side copy, so any journal is recovered there) must hold either exactly what it held (revision
  and every row of every table) or exactly the uninterrupted upgrade's result; anything between
  counts as corrupt. After the re-run: upgraded, equal to the reference upgrade, `check` passes, at
  least one `NAME.schema-REV[.N].bak` and every one of them equal to the original, no scratch files.
* prepare: `clparse prepare` of the bundled sample into a new path. After the kill there may be no
  file, an empty database, or the prepared one; the re-run must exit 0 and store exactly what the
  reference stored (the digests of benchmarks/example_digest.py, and every other table but its
  wall-clock columns), `check` passes, no scratch files.
* train, train-dask: `clparse train --max-iterations 40 [--dask local:2]` on a copy of the
  reference prepare's database. After the re-run every row of every table (trees, iterations,
  margins, label state) must equal the uninterrupted run's byte for byte, wall-clock columns aside
  (the ones docs/schema.md calls wall time or UTC times, plus pid, message, examples/s), and
  `clparse check` (which verifies every checksum) must pass. train-dask is skipped, with a line
  saying so, when `distributed` is not installed (pip install -e '.[test]').

Printed per scenario: runs (rounds), kills (a SIGKILL that landed before the command ended), resumed
identical (the round's every check passed), differs (a check found a difference or a leftover file),
corrupt (the re-run failed, `check` failed, or a killed upgrade left a half-upgraded file; must be 0)
and seconds; then a total line, and one line per failure (the round's files stay in the work
directory: --keep, or any failure, keeps it). Progress goes to stderr. Exit status 1 if anything
differs or is corrupt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw
from example_digest import digests as example_digests

REPO = Path(__file__).resolve().parents[1]
OLD_SCHEMAS = REPO / "tests" / "data" / "old_schemas"
SAMPLE = REPO / "clparse" / "data" / "sample"
SCENARIOS = ("init", "prepare", "upgrade", "train-dask", "train")
# Columns that hold wall-clock times or process facts (docs/schema.md), left out of every comparison.
WALL_CLOCK = {
    "runs": {"created_at", "seconds"},
    "taggers": {"created_at", "seconds"},
    "label_training": {"started_at", "updated_at", "examples_per_second", "message", "pid"},
    "iterations": {"seconds", "search_seconds", "finished_at"},
    "calibrations": {"created_at", "updated_at"},
}
SCRATCH_SUFFIXES = (".creating", ".bak-copying")


# ------------------------------------------------------------------------------------------------
# Running the real command


def clparse_command() -> list[str]:
    """The installed console script beside this Python, else the repository's cli.py."""
    script = Path(sys.executable).parent / "clparse"
    return [str(script)] if script.exists() else [sys.executable, str(REPO / "cli.py")]


@dataclass
class Outcome:
    returncode: int
    seconds: float
    killed: bool  # our planned SIGKILL landed while the command was running
    timed_out: bool  # still running at the time limit (then killed)
    log: Path

    def tail(self) -> str:
        """What the command said last (its stderr's last line, else stdout's), or that it hung."""
        if self.timed_out:
            return f"still running after {self.seconds:.0f} s (killed)"
        for suffix in (".err", ".out"):
            path = self.log.with_suffix(suffix)
            text = path.read_text(errors="replace") if path.exists() else ""
            lines = [x for x in text.splitlines() if x.strip()]
            if lines:
                return lines[-1][:200]
        return "(no output)"


class Runner:
    def __init__(self, workdir: Path) -> None:
        self.base = clparse_command()
        self.workdir = workdir

    def start(self, args: list[str], log: Path) -> tuple[subprocess.Popen[bytes], float]:
        out = open(log.with_suffix(".out"), "wb")
        err = open(log.with_suffix(".err"), "wb")
        try:
            process = subprocess.Popen([*self.base, *args], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                       cwd=self.workdir, start_new_session=True)
        finally:
            out.close()
            err.close()
        return process, time.monotonic()

    @staticmethod
    def finish(process: subprocess.Popen[bytes], started: float, log: Path, kill_after: float | None,
               timeout: float) -> Outcome:
        """Wait for ``process``; SIGKILL its process group after ``kill_after`` seconds, or at ``timeout``."""
        planned = kill_after is not None and kill_after < timeout
        limit = kill_after if planned and kill_after is not None else timeout
        try:
            try:
                process.wait(timeout=max(0.0, started + limit - time.monotonic()))
                return Outcome(process.returncode, time.monotonic() - started, False, False, log)
            except subprocess.TimeoutExpired:
                pass
            _kill_group(process)
            process.wait()
        except BaseException:  # Ctrl-C: leave nothing running
            _kill_group(process)
            raise
        landed = process.returncode == -signal.SIGKILL
        return Outcome(process.returncode, time.monotonic() - started, planned and landed, not planned, log)

    def run(self, args: list[str], log: Path, *, kill_after: float | None = None,
            timeout: float = 3600.0) -> Outcome:
        process, started = self.start(args, log)
        return self.finish(process, started, log, kill_after, timeout)

    def check(self, db: Path, log: Path) -> Outcome:
        return self.run(["check", "--db", str(db)], log, timeout=600)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command and every process of its session (it was started as the group leader)."""
    if process.returncode is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ------------------------------------------------------------------------------------------------
# Reading a database (read-only, in this process: bytes compared as bytes)


def dump(db: Path, *, writable: bool = False) -> dict[str, str]:
    """SHA-256 per table of its rows (all columns but WALL_CLOCK's, ordered by every column), plus the
    schema (every table, index and trigger as SQLite stores it) and the application id. ``writable``
    opens read-write, so that a hot journal left by a kill is rolled back (only on side copies)."""
    flags = apsw.SQLITE_OPEN_READWRITE if writable else apsw.SQLITE_OPEN_READONLY
    connection = apsw.Connection(str(db), flags=flags)
    try:
        out: dict[str, str] = {}
        schema = sorted(tuple(r) for r in connection.execute(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master "
            "WHERE name NOT LIKE 'sqlite_%'"))
        out["(schema)"] = hashlib.sha256(repr(schema).encode()).hexdigest()
        out["(application_id)"] = str(next(iter(connection.execute("PRAGMA application_id")))[0])
        for kind, name, _, _ in schema:
            if kind != "table":
                continue
            columns = [str(r[1]) for r in connection.execute(f'PRAGMA table_info("{name}")')
                       if r[1] not in WALL_CLOCK.get(name, set())]
            listed = ", ".join(f'"{c}"' for c in columns)
            order = ", ".join(str(i + 1) for i in range(len(columns)))
            digest = hashlib.sha256()
            for row in connection.execute(f'SELECT {listed} FROM "{name}" ORDER BY {order}'):
                for value in row:
                    digest.update(type(value).__name__.encode())
                    digest.update(value if isinstance(value, bytes) else repr(value).encode())
                    digest.update(b"\x00")
            out[name] = digest.hexdigest()
        return out
    finally:
        connection.close()


def revision(db: Path, *, writable: bool = False) -> str | None:
    flags = apsw.SQLITE_OPEN_READWRITE if writable else apsw.SQLITE_OPEN_READONLY
    connection = apsw.Connection(str(db), flags=flags)
    try:
        found = list(connection.execute("SELECT version_num FROM alembic_version"))
        return str(found[0][0]) if found else None
    except apsw.SQLError:
        return None
    finally:
        connection.close()


def newest_revision() -> str:
    return sorted(p.name.split("_")[0] for p in (REPO / "migrations" / "versions").glob("[0-9]*_*.py"))[-1]


def prepared_state(db: Path) -> str:
    """What a killed ``prepare`` left (read in a side copy, read-write so that its log is recovered)."""
    try:
        connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.Error:
        return "other"
    try:
        runs = next(iter(connection.execute("SELECT count(*) FROM runs")))[0]
        taggers = next(iter(connection.execute("SELECT count(*) FROM taggers")))[0]
        return "a prepared run with its tagger" if taggers else \
            "a prepared run, no tagger yet" if runs else "a database without a run"
    except apsw.Error:
        return "other"
    finally:
        connection.close()


def differences(found: dict[str, str], expected: dict[str, str]) -> list[str]:
    return sorted(k for k in set(found) | set(expected) if found.get(k) != expected.get(k))


def scratch_files(directory: Path) -> list[str]:
    """Scratch files a creator or an upgrade's backup leaves when it dies: ``.NAME.<pid>.<hex>.creating``,
    ``.NAME.schema-REV.<pid>.<hex>.bak-copying`` and their -wal/-shm/-journal."""
    found = []
    for path in directory.iterdir():
        base = path.name
        for tail in ("-wal", "-shm", "-journal"):
            base = base.removesuffix(tail)
        if path.name.startswith(".") and base.endswith(SCRATCH_SUFFIXES):
            found.append(path.name)
    return sorted(found)


def copy_with_logs(db: Path, target_dir: Path) -> Path:
    """Copy ``db`` and its -wal/-shm/-journal (as a kill left them) into ``target_dir``."""
    target_dir.mkdir(parents=True, exist_ok=True)
    for tail in ("", "-wal", "-shm", "-journal"):
        source = Path(f"{db}{tail}")
        if source.exists():
            shutil.copyfile(source, target_dir / source.name)
    return target_dir / db.name


# ------------------------------------------------------------------------------------------------
# Tallies


@dataclass
class Tally:
    scenario: str
    runs: int = 0
    kills: int = 0
    identical: int = 0
    differs: int = 0
    corrupt: int = 0
    seconds: float = 0.0
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def verdict(self, round_name: str, corrupt: list[str], differ: list[str]) -> str:
        self.runs += 1
        if corrupt:
            self.corrupt += 1
            self.failures.append(f"{round_name}: CORRUPT: " + "; ".join(corrupt + differ))
            return "CORRUPT"
        if differ:
            self.differs += 1
            self.failures.append(f"{round_name}: DIFFERS: " + "; ".join(differ))
            return "DIFFERS"
        self.identical += 1
        return "identical"


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Benchmark:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.runner = Runner(workdir)
        self.prepared: Path | None = None  # the reference prepare's database, copied before anything read it
        self.train_references: dict[str, dict[str, str]] = {}
        self.newest = newest_revision()

    def timeout(self, typical: float) -> float:
        return max(300.0, 20 * typical)

    def directory(self, *parts: str) -> Path:
        path = self.workdir.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def kill_moment(self, rng: random.Random, typical: float) -> float:
        return rng.uniform(0.0, typical)

    def landed(self, tally: Tally, outcome: Outcome) -> str:
        if outcome.killed:
            tally.kills += 1
            return f"killed at {outcome.seconds:.2f} s"
        return f"ended (exit {outcome.returncode}) before the kill at {outcome.seconds:.2f} s"

    def resume_checks(self, db: Path, outcome: Outcome, log: Path, corrupt: list[str],
                      differ: list[str]) -> bool:
        """The re-run's exit status, the scratch files beside ``db``, then `clparse check`. True if ``db`` can
        be compared."""
        if outcome.returncode != 0:
            corrupt.append(f"the re-run exited {outcome.returncode}: {outcome.tail()}")
        leftovers = scratch_files(db.parent)
        if leftovers:
            differ.append("scratch files left: " + ", ".join(leftovers))
        if not db.exists():
            corrupt.append("no database after the re-run")
            return False
        checked = self.runner.check(db, log)
        if checked.returncode != 0:
            corrupt.append(f"clparse check exited {checked.returncode}: {checked.tail()}")
            return False
        return True

    # -- init --------------------------------------------------------------------------------------

    def init(self, tally: Tally, rounds: int, rng: random.Random) -> list[Tally]:
        reference = self.directory("init", "reference") / "db.sqlite"
        first = self.runner.run(["init", "--db", str(reference)], reference.with_name("init"))
        if first.returncode != 0:
            tally.skipped = f"the reference init failed: {first.tail()}"
            return [tally]
        expected = dump(reference)
        tally.notes.append(f"typical duration {first.seconds:.2f} s (reference init)")
        race = Tally("init-race")
        for n in range(1, rounds + 1):
            here = self.directory("init", f"round-{n}")
            db = here / "db.sqlite"
            args = ["init", "--db", str(db)]
            killed = self.runner.run(args, here / "killed", kill_after=self.kill_moment(rng, first.seconds))
            what = self.landed(tally, killed)
            left = "a file" if db.exists() else "no file"
            resumed = self.runner.run(args, here / "resume", timeout=self.timeout(first.seconds))
            corrupt: list[str] = []
            differ: list[str] = []
            if self.resume_checks(db, resumed, here / "check", corrupt, differ):
                if revision(db) != self.newest:
                    corrupt.append(f"schema {revision(db)} after the re-run, not {self.newest}")
                elif changed := differences(dump(db), expected):
                    differ.append("differs from a new database in: " + ", ".join(changed))
            verdict = tally.verdict(f"init round {n}", corrupt, differ)
            progress(f"init round {n}: {what}, left {left}; resumed: {verdict}")

            # Two racers on one new path, started at the same moment.
            race_started = time.monotonic()
            here = self.directory("init", f"race-{n}")
            db = here / "db.sqlite"
            args = ["init", "--db", str(db)]
            racers = [self.runner.start(args, here / f"racer-{i}") for i in (1, 2)]
            outcomes = [Runner.finish(p, t, here / f"racer-{i}", None, self.timeout(first.seconds))
                        for i, (p, t) in enumerate(racers, 1)]
            corrupt, differ = [], []
            for i, outcome in enumerate(outcomes, 1):
                if outcome.returncode != 0:
                    corrupt.append(f"racer {i} exited {outcome.returncode}: {outcome.tail()}")
            files = sorted(p.name for p in here.iterdir() if not p.name.startswith(("racer-", "check")))
            if files != ["db.sqlite"]:
                differ.append("files beside the database: " + ", ".join(f for f in files if f != "db.sqlite"))
            if db.exists():
                checked = self.runner.check(db, here / "check")
                if checked.returncode != 0:
                    corrupt.append(f"clparse check exited {checked.returncode}: {checked.tail()}")
                elif changed := differences(dump(db), expected):
                    differ.append("differs from a new database in: " + ", ".join(changed))
            else:
                corrupt.append("no database")
            said = [o.log.with_suffix(".out").read_text(errors="replace") for o in outcomes]
            created = sum("created by another process" not in s for s in said)
            verdict = race.verdict(f"init race {n}", corrupt, differ)
            race.seconds += time.monotonic() - race_started
            progress(f"init race {n}: exits {[o.returncode for o in outcomes]}, {created} said it created; "
                     f"{verdict}")
        return [tally, race]

    # -- upgrade -----------------------------------------------------------------------------------

    def upgrade(self, tally: Tally, rounds: int, rng: random.Random) -> list[Tally]:
        assets = sorted(OLD_SCHEMAS.glob("schema-*.sqlite"))
        if not assets:
            tally.skipped = f"no old-schema databases in {OLD_SCHEMAS}"
            return [tally]
        references: dict[Path, tuple[float, dict[str, str], dict[str, str]]] = {}
        after_kill = {"unchanged (same bytes)": 0, "unchanged (same rows, other bytes)": 0, "upgraded": 0}
        for n in range(1, rounds + 1):
            asset = rng.choice(assets)
            old = asset.stem.split("-")[1]
            if asset not in references:  # the uninterrupted upgrade of this asset: result and duration
                here = self.directory("upgrade", f"reference-{old}")
                original = here / "original.sqlite"
                shutil.copyfile(asset, original)
                db = here / "db.sqlite"
                shutil.copyfile(asset, db)
                first = self.runner.run(["init", "--db", str(db)], here / "init")
                if first.returncode != 0:
                    tally.failures.append(f"the reference upgrade of {asset.name} failed: {first.tail()}")
                    tally.corrupt += 1
                    continue
                references[asset] = (first.seconds, dump(original), dump(db))
                tally.notes.append(f"{asset.name}: typical duration {first.seconds:.2f} s")
            typical, before, expected = references[asset]
            here = self.directory("upgrade", f"round-{n}")
            db = here / "db.sqlite"
            shutil.copyfile(asset, db)
            args = ["init", "--db", str(db)]
            killed = self.runner.run(args, here / "killed", kill_after=self.kill_moment(rng, typical))
            what = self.landed(tally, killed)
            corrupt: list[str] = []
            differ: list[str] = []
            # What the kill left, read in a side copy (a hot journal is rolled back there, not here).
            side = copy_with_logs(db, here / "after-kill")
            try:
                found_revision, found = revision(side, writable=True), dump(side, writable=True)
            except apsw.Error as exc:
                found_revision, found = None, {}
                corrupt.append(f"after the kill the file cannot be read: {exc}")
            if found_revision == old and not differences(found, before):
                state = "unchanged"
                same = db.read_bytes() == asset.read_bytes() and not any(
                    Path(f"{db}{t}").exists() for t in ("-wal", "-journal"))
                after_kill["unchanged (same bytes)" if same else "unchanged (same rows, other bytes)"] += 1
            elif found_revision == self.newest and not differences(found, expected):
                state = "upgraded"
                after_kill["upgraded"] += 1
            elif found:
                state = "half-upgraded"
                listed = ", ".join(differences(found, before))
                corrupt.append(f"after the kill: schema {found_revision}, neither the old file nor the "
                               f"upgraded one (differs from the old in {listed})")
            else:
                state = "unreadable"
            resumed = self.runner.run(args, here / "resume", timeout=self.timeout(typical))
            if self.resume_checks(db, resumed, here / "check", corrupt, differ):
                if revision(db) != self.newest:
                    corrupt.append(f"schema {revision(db)} after the re-run, not {self.newest}")
                elif changed := differences(dump(db), expected):
                    differ.append("differs from the uninterrupted upgrade in: " + ", ".join(changed))
                backups = sorted(here.glob(f"{db.name}.schema-{old}*.bak"))
                if not backups:
                    differ.append("no backup")
                for backup in backups:
                    if changed := differences(dump(backup), before):
                        differ.append(f"{backup.name} differs from the original in: " + ", ".join(changed))
            verdict = tally.verdict(f"upgrade round {n} ({asset.name})", corrupt, differ)
            progress(f"upgrade round {n} ({asset.name}): {what}, left it {state}; resumed: {verdict}")
        tally.notes.append("after the kills: " + ", ".join(f"{v} {k}" for k, v in after_kill.items()))
        return [tally]

    # -- prepare -----------------------------------------------------------------------------------

    def prepare_args(self, db: Path) -> list[str]:
        return ["prepare", "--db", str(db), "--train", str(SAMPLE / "train.ptb"),
                "--dev", str(SAMPLE / "dev.ptb")]

    def reference_prepare(self) -> tuple[Path, float] | str:
        """The uninterrupted prepare (in prepare/reference/), its copy kept for train, and its duration."""
        here = self.directory("prepare", "reference")
        db = here / "db.sqlite"
        first = self.runner.run(self.prepare_args(db), here / "prepare")
        if first.returncode != 0:
            return f"the reference prepare failed: {first.tail()}"
        self.prepared = self.workdir / "prepared.sqlite"
        shutil.copyfile(db, self.prepared)  # before anything opened it: one complete file, no log
        return db, first.seconds

    def prepare(self, tally: Tally, rounds: int, rng: random.Random) -> list[Tally]:
        found = self.reference_prepare()
        if isinstance(found, str):
            tally.skipped = found
            return [tally]
        reference, typical = found
        expected, expected_examples = dump(reference), example_digests(str(reference))
        tally.notes.append(f"typical duration {typical:.1f} s (reference prepare)")
        after_kill = {"no file": 0, "a database without a run": 0, "a prepared run, no tagger yet": 0,
                      "a prepared run with its tagger": 0, "other": 0}
        for n in range(1, rounds + 1):
            here = self.directory("prepare", f"round-{n}")
            db = here / "db.sqlite"
            args = self.prepare_args(db)
            killed = self.runner.run(args, here / "killed", kill_after=self.kill_moment(rng, typical))
            what = self.landed(tally, killed)
            if not db.exists():
                state = "no file"
            else:
                side = copy_with_logs(db, here / "after-kill")
                state = prepared_state(side)
            after_kill[state] += 1
            resumed = self.runner.run(args, here / "resume", timeout=self.timeout(typical))
            corrupt: list[str] = []
            differ: list[str] = []
            if self.resume_checks(db, resumed, here / "check", corrupt, differ):
                if changed := differences(dump(db), expected):
                    differ.append("differs from the uninterrupted prepare in: " + ", ".join(changed))
                if changed := differences(example_digests(str(db)), expected_examples):
                    differ.append("example_digest differs in: " + ", ".join(changed))
            verdict = tally.verdict(f"prepare round {n}", corrupt, differ)
            progress(f"prepare round {n}: {what}, left {state}; resumed: {verdict}")
        tally.notes.append("after the kills: " + ", ".join(f"{v} {k}" for k, v in after_kill.items() if v))
        return [tally]

    # -- train -------------------------------------------------------------------------------------

    def train(self, tally: Tally, rounds: int, rng: random.Random, dask: bool) -> list[Tally]:
        if dask:
            probe = subprocess.run([sys.executable, "-c", "import distributed"], capture_output=True)
            if probe.returncode != 0:
                tally.skipped = "dask[distributed] is not installed (pip install -e '.[test]' or '.[dask]')"
                return [tally]
        if self.prepared is None:
            found = self.reference_prepare()
            if isinstance(found, str):
                tally.skipped = found
                return [tally]
        assert self.prepared is not None
        extra = ["--max-iterations", str(self.args.max_iterations)]
        if self.args.labels:
            extra += ["--labels", self.args.labels]
        if dask:
            extra += ["--dask", f"local:{self.args.dask_workers}"]
        here = self.directory(tally.scenario, "reference")
        reference = here / "db.sqlite"
        shutil.copyfile(self.prepared, reference)
        first = self.runner.run(["train", "--db", str(reference), *extra], here / "train")
        if first.returncode != 0:
            tally.skipped = f"the reference run failed: {first.tail()}"
            return [tally]
        expected = dump(reference)
        self.train_references[tally.scenario] = expected
        tally.notes.append(f"typical duration {first.seconds:.1f} s (reference `train {' '.join(extra)}`)")
        if len(self.train_references) == 2:  # both ran: --dask must train exactly what a plain train does
            plain, remote = self.train_references["train"], self.train_references["train-dask"]
            if changed := differences(remote, plain):
                tally.differs += 1
                tally.failures.append("the uninterrupted train-dask run differs from the uninterrupted "
                                      "train run in: " + ", ".join(changed))
            else:
                tally.notes.append("the uninterrupted train and train-dask runs stored identical rows")
        for n in range(1, rounds + 1):
            here = self.directory(tally.scenario, f"round-{n}")
            db = here / "db.sqlite"
            shutil.copyfile(self.prepared, db)
            args = ["train", "--db", str(db), *extra]
            killed = self.runner.run(args, here / "killed", kill_after=self.kill_moment(rng, first.seconds))
            what = self.landed(tally, killed)
            resumed = self.runner.run(args, here / "resume", timeout=self.timeout(first.seconds))
            corrupt: list[str] = []
            differ: list[str] = []
            if self.resume_checks(db, resumed, here / "check", corrupt, differ):
                if changed := differences(dump(db), expected):
                    differ.append("differs from the uninterrupted run in: " + ", ".join(changed))
            verdict = tally.verdict(f"{tally.scenario} round {n}", corrupt, differ)
            progress(f"{tally.scenario} round {n}: {what}; resumed in {resumed.seconds:.1f} s: {verdict}")
        return [tally]

    # ----------------------------------------------------------------------------------------------

    def scenario(self, name: str) -> list[Tally]:
        tally = Tally(name)
        rng = random.Random(f"{self.args.seed}:{name}")
        rounds = self.args.dask_rounds if name == "train-dask" and self.args.dask_rounds is not None \
            else self.args.rounds
        started = time.monotonic()
        progress(f"{name}: {rounds} round(s) ...")
        if name == "init":
            tallies = self.init(tally, rounds, rng)
        elif name == "upgrade":
            tallies = self.upgrade(tally, rounds, rng)
        elif name == "prepare":
            tallies = self.prepare(tally, rounds, rng)
        else:
            tallies = self.train(tally, rounds, rng, dask=name == "train-dask")
        # The scenario's own row gets its whole time but what its other rows (init-race) timed themselves.
        tally.seconds = time.monotonic() - started - sum(t.seconds for t in tallies if t is not tally)
        if tally.skipped:
            progress(f"{name}: skipped: {tally.skipped}")
        return tallies


def print_table(tallies: list[Tally]) -> None:
    header = f"{'scenario':<12} {'runs':>5} {'kills':>6} {'resumed identical':>18} {'differs':>8} " \
             f"{'corrupt':>8} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for t in tallies:
        if t.skipped:
            print(f"{t.scenario:<12} skipped: {t.skipped}")
            continue
        print(f"{t.scenario:<12} {t.runs:>5} {t.kills:>6} {t.identical:>18} {t.differs:>8} {t.corrupt:>8} "
              f"{t.seconds:>8.1f}")
    total = totals(tallies)
    print("-" * len(header))
    print(f"{'total':<12} {total['runs']:>5} {total['kills']:>6} {total['identical']:>18} "
          f"{total['differs']:>8} {total['corrupt']:>8} {total['seconds']:>8.1f}")
    for t in tallies:
        for note in t.notes:
            print(f"  {t.scenario}: {note}")
    for t in tallies:
        for failure in t.failures:
            print(f"  FAILED {failure}")


def totals(tallies: list[Tally]) -> dict[str, Any]:
    return {key: sum(getattr(t, key) for t in tallies) for key in
            ("runs", "kills", "identical", "differs", "corrupt", "seconds")}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, metavar="N",
                        help="kill-and-resume rounds per scenario (default: %(default)s)")
    parser.add_argument("--dask-rounds", type=int, default=None, metavar="N",
                        help="rounds of train-dask (default: --rounds); it is the slowest scenario")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the kill moments and of the old-schema picks (default: %(default)s)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), metavar="LIST",
                        help=f"comma-separated, run in the order given, of: {','.join(SCENARIOS)} "
                             "(default: all)")
    parser.add_argument("--workdir", type=Path, default=None, metavar="DIR",
                        help="where the databases and logs go (default: a new temporary directory, removed "
                             "at the end unless something failed or --keep)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    parser.add_argument("--max-iterations", type=int, default=40, metavar="N",
                        help="train's --max-iterations (default: %(default)s)")
    parser.add_argument("--labels", default=None, metavar="NP,VP,...",
                        help="train's --labels (default: every label)")
    parser.add_argument("--dask-workers", type=int, default=2, metavar="N",
                        help="train-dask's --dask local:N (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object instead")
    args = parser.parse_args(argv)
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [s for s in names if s not in SCENARIOS]
    if unknown or not names:
        parser.error(f"--scenarios: unknown {', '.join(unknown) or '(none given)'}; choose from "
                     f"{', '.join(SCENARIOS)}")
    if args.rounds < 1 or (args.dask_rounds is not None and args.dask_rounds < 0):
        parser.error("--rounds must be at least 1 (--dask-rounds at least 0)")
    args.scenarios = names
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    temporary = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="clparse-faults-")) if temporary else args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    progress(f"work directory {workdir}; clparse command: {' '.join(clparse_command())}")
    bench = Benchmark(args, workdir)
    started = time.monotonic()
    tallies: list[Tally] = []
    for name in args.scenarios:
        tallies.extend(bench.scenario(name))
    total = totals(tallies)
    failed = total["differs"] + total["corrupt"] > 0
    if args.json:
        print(json.dumps({"seed": args.seed, "rounds": args.rounds, "workdir": str(workdir),
                          "scenarios": [asdict(t) for t in tallies], "total": total,
                          "wall_seconds": time.monotonic() - started, "ok": not failed}, indent=2))
    else:
        print_table(tallies)
    if temporary and not failed and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    elif failed or args.keep:
        print(f"  files kept in {workdir}", file=sys.stderr if args.json else sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
