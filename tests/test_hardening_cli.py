"""Issue 14 (hardening), the command line: every failure one clear line, read-only that is read-only,
input checked before the slow work, one output line per input line, progress only on a terminal.

Each test runs the real ``clparse`` in a subprocess and asserts the exact message a user sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import damage, read_rows
from tests.terminal import run_on_terminal

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def clparse(*args: str | Path, stdin: str | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "clparse"), *map(str, args)], input=stdin,
                          capture_output=True, text=True, env=ENV, cwd=cwd, timeout=timeout)


def one_error(done: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The single ``Error:`` line of a failed run (no traceback, nothing else on stderr)."""
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def sample_trees(split: str, n: int, skip: int = 0) -> str:
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    trees = list(read_trees(sample_path(split)))[skip:skip + n]
    return "".join(format_tree(t) + "\n" for t in trees)


@pytest.fixture(scope="module")
def treebank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """train/{a,b}.ptb and dev/a.ptb: a few sample trees each (prepare takes a second or two)."""
    where = tmp_path_factory.mktemp("treebank")
    (where / "train").mkdir()
    (where / "dev").mkdir()
    (where / "train" / "a.ptb").write_text(sample_trees("train", 12))
    (where / "train" / "b.mrg").write_text(sample_trees("train", 12, skip=12))
    (where / "dev" / "a.ptb").write_text(sample_trees("dev", 4))
    return where


@pytest.fixture(scope="module")
def untrained_db(treebank: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Prepared but never trained: loading a parser from it fails, so any error about the input that
    shows up instead proves the input was checked before the model was loaded."""
    db = tmp_path_factory.mktemp("untrained") / "untrained.sqlite"
    done = clparse("prepare", "--db", db, "--train", treebank / "train", "--dev", treebank / "dev")
    assert done.returncode == 0, done.stderr
    return db


# ----------------------------------------------------------------------------- 15. several files, directories


def test_prepare_takes_several_files_after_one_flag_and_directories(treebank: Path, tmp_path: Path) -> None:
    by_files = tmp_path / "files.sqlite"
    done = clparse("prepare", "--db", by_files, "--train", treebank / "train" / "a.ptb",
                   treebank / "train" / "b.mrg", "--dev", treebank / "dev" / "a.ptb", "--max-words", "40")
    assert done.returncode == 0, done.stderr
    by_dir = tmp_path / "dirs.sqlite"
    done = clparse("prepare", "--db", by_dir, "--train", treebank / "train", "--dev", treebank / "dev",
                   "--max-words", "40")
    assert done.returncode == 0, done.stderr
    query = "SELECT split, path, trees FROM treebank_files ORDER BY id"
    expected = [("train", str(treebank / "train" / "a.ptb"), 12),
                ("train", str(treebank / "train" / "b.mrg"), 12),
                ("dev", str(treebank / "dev" / "a.ptb"), 4)]
    assert read_rows(by_files, query) == expected
    assert read_rows(by_dir, query) == expected


def test_a_directory_without_treebank_files_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = clparse("prepare", "--db", tmp_path / "x.sqlite", "--train", tmp_path / "empty")
    assert one_error(done, 2) == (f"Error: Invalid value for '--train': {tmp_path / 'empty'}: directory "
                                  "holds no treebank file (*.ptb or *.mrg)")
    assert not (tmp_path / "x.sqlite").exists()


def test_treebank_stats_takes_a_directory(treebank: Path) -> None:
    done = clparse("treebank", "stats", treebank / "train", "--json")
    assert done.returncode == 0, done.stderr
    assert '"sentences": 24' in done.stdout


# ----------------------------------------------------------------------------- 16. backup


def test_backup_copies_consistently_while_a_writer_holds_a_transaction(trained_db: Path, db_copy: Path,
                                                                         tmp_path: Path) -> None:
    import apsw

    writer = apsw.Connection(str(db_copy))
    writer.execute("BEGIN IMMEDIATE")
    # in flight, like a training iteration
    writer.execute("UPDATE label_training SET message = 'uncommitted'")
    try:
        target = tmp_path / "copy.sqlite"
        done = clparse("backup", "--db", db_copy, target)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"{db_copy} backed up to {target} (")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert read_rows(target, "PRAGMA integrity_check") == [("ok",)]
    query = "SELECT count(*), sum(iteration) FROM label_training WHERE message IS NOT 'uncommitted'"
    assert read_rows(target, query) == read_rows(trained_db, query)
    assert (read_rows(target, "SELECT count(*) FROM tree_nodes")
            == read_rows(trained_db, "SELECT count(*) FROM tree_nodes"))


def test_backup_never_overwrites(trained_db: Path, tmp_path: Path) -> None:
    target = tmp_path / "exists.sqlite"
    target.write_text("keep me")
    done = clparse("backup", "--db", trained_db, target)
    assert one_error(done) == (f"Error: {target}: already exists; choose a new name "
                               "(a backup never overwrites)")
    assert target.read_text() == "keep me"


# ----------------------------------------------------------------------- 17. prepare: checks first, cleans up


def test_prepare_failing_on_a_new_path_leaves_no_database(treebank: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ptb"
    bad.write_text("(S (NP (DT the) dog))\n")
    db = tmp_path / "new.sqlite"
    done = clparse("prepare", "--db", db, "--train", treebank / "train" / "a.ptb", bad)
    assert one_error(done) == f"Error: {bad}:1:17: leaf 'dog' without a tag"
    assert f"removed {db} again: this command created it and did not finish" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ptb"]


def test_prepare_checks_skip_step_before_creating_anything(treebank: Path, tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    done = clparse("prepare", "--db", db, "--train", treebank / "train", "--skip-step", "max_words")
    error = one_error(done, 2)
    assert error.startswith("Error: Invalid value for '--skip-step': 'max_words' is not one of "
                            "'strip_function_tags'")
    assert not db.exists()


def test_prepare_refuses_skip_bad_with_the_reason(treebank: Path, tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    done = clparse("prepare", "--db", db, "--train", treebank / "train", "--skip-bad")
    assert one_error(done, 2) == (
        "Error: prepare does not skip bad trees: a run stores every tree of its files (and their digests); "
        "fix the tree the error names, or write the good trees with `clparse treebank preprocess "
        "--skip-bad --skip-step ...` first")
    assert not db.exists()


# ----------------------------------------------------------------------------- 18. smaller things


def test_eval_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    gold = tmp_path / "gold.ptb"
    gold.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran)) (. .)))\n" * 5000)  # far more than a pipe buffer
    done = subprocess.run(f"clparse eval --sentences {gold} {gold} | head -n 1", shell=True,
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.stderr == ""
    assert len(done.stdout.splitlines()) == 1


def test_empty_sql_is_an_error(trained_db: Path) -> None:
    assert one_error(clparse("sql", "--db", trained_db, "")) == (
        "Error: empty query; give a SQL statement, or no argument for the interactive shell")
    assert one_error(clparse("sql", "--db", trained_db, "  \n ")).startswith("Error: empty query")


def test_bad_theta_names_the_option(trained_db: Path) -> None:
    done = clparse("parse", "--db", trained_db, "--theta", "abc", stdin="a b\n")
    assert one_error(done, 2) == "Error: Invalid value for '--theta': 'abc' is neither a number nor 'best'"
    done = clparse("parse", "--db", trained_db, "--theta", "-1", stdin="a b\n")
    assert one_error(done, 2) == "Error: Invalid value for '--theta': '-1': Θ̂ must be a finite number > 0"


def test_sql_query_may_start_with_a_comment(trained_db: Path) -> None:
    """Item 14's cause: a pasted README query starts with `--`, which click took for an option."""
    done = clparse("sql", "--db", trained_db, "-- the labels\nSELECT count(*) AS n FROM labels", "--csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "n"


def test_several_statements_print_each_result(trained_db: Path) -> None:
    done = clparse("sql", "--db", trained_db, "SELECT 1 AS a; SELECT 2 AS b, 3 AS c")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a\n-\n1\n(1 row)\n\nb  c\n-  -\n2  3\n(1 row)\n"


# ----------------------------------------------------------------------------- 9, 10, 11, 18: parse input


def test_binary_input_is_one_line_naming_file_and_line(untrained_db: Path, tmp_path: Path) -> None:
    text = tmp_path / "sentences.txt"
    text.write_bytes(b"The dog barked .\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n")
    done = clparse("parse", "--db", untrained_db, "--theta", "1", text)
    assert one_error(done) == f"Error: {text}:2: byte 1 is not UTF-8 text (binary file, or another encoding?)"
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"a b\nc\x00d\n")
    done = clparse("parse", "--db", untrained_db, "--theta", "1", nul)
    assert one_error(done) == f"Error: {nul}:2: binary data (NUL byte), not text; give a UTF-8 text file"


def test_input_is_checked_before_the_model_is_loaded(untrained_db: Path, tmp_path: Path) -> None:
    """The untrained database cannot give a parser: the input error must come first, and fast."""
    start = time.monotonic()
    done = clparse("parse", "--db", untrained_db, "--theta", "1", tmp_path / "missing.txt")
    assert one_error(done, 2) == (f"Error: Invalid value for '[FILES]...': File '{tmp_path / 'missing.txt'}' "
                                  "does not exist.")
    tagged = tmp_path / "tagged.txt"
    tagged.write_text("The/DT dog/NN\nbarked\n")
    done = clparse("parse", "--db", untrained_db, "--theta", "1", "--input-format", "tagged", tagged)
    assert one_error(done) == f"Error: {tagged}:2: token 1 'barked' is not word/TAG"
    assert time.monotonic() - start < 60  # no model load (seconds each) was waited for


def test_every_input_line_gives_one_output_line(trained_db: Path) -> None:
    """Blank lines give (ROOT), as Parser.parse("") does, so output line n is input line n's parse."""
    done = clparse("parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "tagged",
                   stdin="The/DT dog/XYZ barked/VBD ./.\n\n   \nIt/PRP ran/VBD ./.\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and lines[1] == lines[2] == "(ROOT)"
    assert lines[0].startswith("(ROOT ") and "(XYZ dog)" in lines[0]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning")]
    assert warnings == [
        "warning: -:1: token 2 has tag 'XYZ', never seen in training (warned once per tag)",
        "warning: -:2: empty line; its output is (ROOT), so output lines stay aligned with input",
        "warning: -:3: empty line; its output is (ROOT), so output lines stay aligned with input",
    ]
    assert done.stderr.splitlines()[-1].startswith("parsed 4 sentence(s); 0 flat fallback(s)")
    # The output stays a valid parse file: `clparse eval` reads (ROOT) as an empty parse and skips it,
    # as EVALB skips an empty parse, keeping the other sentences paired by position.
    gold = "".join(line + "\n" for line in lines if line != "(ROOT)")
    assert gold.count("\n") == 2


# ----------------------------------------------------------------------------- 12. progress


def test_parse_from_stdin_shows_progress_on_a_terminal_only(trained_db: Path) -> None:
    sentences = "The dog barked .\nIt ran .\n"
    args = ["parse", "--db", str(trained_db), "--theta", "3", "--beam", "1"]
    status, out, shown = run_on_terminal([str(BIN / "clparse"), *args], sentences, ENV)
    assert status == 0, shown
    assert len(out.splitlines()) == 2
    assert "parsing: 2 sentences" in shown  # stdin: a count and a rate, no total
    done = clparse(*args, stdin=sentences)
    assert "parsing:" not in done.stderr  # not a terminal: no progress lines at all


def test_progress_line_has_total_and_eta() -> None:
    from clparse.progress import Progress

    bar = Progress("parsing", 40, "sentences", enabled=False)
    bar.start -= 10.0
    bar.update(10)
    line = bar.line()
    assert line.startswith("parsing: 10/40 sentences (25 %)  ")
    assert "ETA 0:30" in line or "ETA 0:29" in line or "ETA 0:31" in line
    unknown = Progress("parsing", None, "sentences", enabled=False)
    unknown.update(3)
    assert unknown.line().startswith("parsing: 3 sentences  ") and "ETA" not in unknown.line()


# ----------------------------------------------------------------------------- 7, 8. read-only


def test_read_only_sql_writes_no_file(trained_db: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.sqlite"
    done = clparse("sql", "--db", trained_db, f"VACUUM INTO '{target}'")
    assert one_error(done) == (f"Error: ATTACH and VACUUM INTO open another file ({target}) for writing; "
                               "refused: clparse sql is read-only without --write")
    assert not target.exists()
    done = clparse("sql", "--db", trained_db, f"ATTACH '{target}' AS other")
    assert one_error(done).startswith("Error: ATTACH and VACUUM INTO open another file")
    assert not target.exists()


def test_read_only_sql_says_read_only_for_pragmas(trained_db: Path) -> None:
    done = clparse("sql", "--db", trained_db, "PRAGMA journal_mode=DELETE")
    assert one_error(done) == ("Error: PRAGMA journal_mode = DELETE would change the database; refused: "
                               "clparse sql is read-only without --write")
    done = clparse("sql", "--db", trained_db, "PRAGMA table_info(labels)")  # reading pragmas still work
    assert done.returncode == 0 and "name" in done.stdout


def test_read_only_shell_refuses_open_and_py(trained_db: Path, tmp_path: Path) -> None:
    other, marker = tmp_path / "other.sqlite", tmp_path / "marker"
    script = f".open {other}\n.py open({str(marker)!r}, 'w').write('x')\n.output {tmp_path / 'out.txt'}\n"
    done = clparse("sql", "--db", trained_db, stdin=script)
    refusal = "not in a read-only shell; start `clparse sql --write` for this command"
    assert (done.stdout + done.stderr).count(refusal) == 3, done.stdout + done.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_write_mode_allows_vacuum_into(db_copy: Path, tmp_path: Path) -> None:
    target = tmp_path / "vacuumed.sqlite"
    done = clparse("sql", "--db", db_copy, f"VACUUM INTO '{target}'", "--write")
    assert done.returncode == 0, done.stderr
    assert target.stat().st_size > 0


# ----------------------------------------------------------------------------- 5, 6. damaged databases


@pytest.fixture
def damaged_db(db_copy: Path) -> Path:
    damage(db_copy, "tree_nodes")
    return db_copy


DAMAGED = ("the database is damaged; nothing was written to it; restore it from a backup (`clparse backup` "
           "makes one)")


def test_parse_on_a_damaged_database_is_one_line(damaged_db: Path) -> None:
    done = clparse("parse", "--db", damaged_db, "--theta", "3", stdin="The dog barked .\n")
    assert one_error(done).startswith(f"Error: {damaged_db}: {DAMAGED} (quick_check: ")
    assert "Background on this error" not in done.stderr and "[SQL:" not in done.stderr


def test_damage_met_while_reading_is_one_line(db_copy: Path) -> None:
    """Through APSW (sql) and through SQLAlchemy (status): SQLITE_CORRUPT becomes the same line."""
    damage(db_copy, "label_training")
    commands: list[list[str | Path]] = [["sql", "--db", db_copy, "SELECT count(*) FROM label_training"],
                                        ["status", "--db", db_copy]]
    for args in commands:
        done = clparse(*args)
        assert one_error(done) == f"Error: {db_copy}: {DAMAGED}"
        assert "Background on this error" not in done.stderr and "[SQL:" not in done.stderr


def test_verbose_adds_the_details(db_copy: Path) -> None:
    damage(db_copy, "label_training")
    done = clparse("--verbose", "status", "--db", db_copy)
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1] == f"Error: {db_copy}: {DAMAGED}"


def test_writing_commands_refuse_a_damaged_database(damaged_db: Path) -> None:
    before = damaged_db.read_bytes()
    for args in (["calibrate", "--thetas", "3"], ["sql", "--write", "DELETE FROM calibrations"], ["init"]):
        done = clparse(*args, "--db", damaged_db)
        assert one_error(done).startswith(f"Error: {damaged_db}: {DAMAGED} (quick_check: "), args
    assert damaged_db.read_bytes() == before


def test_train_refuses_a_damaged_database_and_writes_nothing(damaged_db: Path) -> None:
    before = damaged_db.read_bytes()
    done = clparse("train", "--db", damaged_db, "--max-iterations", "100")
    error = one_error(done)
    assert error.startswith(f"Error: {damaged_db}: {DAMAGED} (quick_check: ")
    assert damaged_db.read_bytes() == before
    assert not Path(f"{damaged_db}-wal").exists() or Path(f"{damaged_db}-wal").stat().st_size == 0


def test_check_command(trained_db: Path, damaged_db: Path) -> None:
    done = clparse("check", "--db", trained_db)
    assert done.returncode == 0 and done.stdout == f"{trained_db}: ok\n"
    assert one_error(clparse("check", "--db", damaged_db)).startswith(
        f"Error: {damaged_db}: {DAMAGED} (integrity_check: ")


# ----------------------------------------------------------------------------- 1, 3, 4. claims


@pytest.fixture
def sleeper() -> Iterator[Callable[[], int]]:
    """Start unrelated processes (they stand for whatever now holds a dead trainer's pid)."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> int:
        process = subprocess.Popen(["sleep", "300"])
        started.append(process)
        return process.pid

    yield start
    for process in started:
        process.kill()
        process.wait()


def claim_for(db: Path, label: str, pid: int, updated_at: str) -> None:
    import apsw

    connection = apsw.Connection(str(db))
    connection.execute("UPDATE label_training SET state = 'training', pid = ?, updated_at = ? WHERE label_id "
                       "= (SELECT id FROM labels WHERE name = ?)", (pid, updated_at, label))
    connection.close()


def test_a_reused_pid_does_not_hold_a_claim(db_copy: Path, sleeper: Callable[[], int]) -> None:
    """The claim was written in 2000; the live process with that pid started now: not the trainer."""
    claim_for(db_copy, "ADVP", sleeper(), "2000-01-01T00:00:00+00:00")
    done = clparse("train", "--db", db_copy, "--labels", "ADVP", "--until-theta", "2.5")
    assert done.returncode == 0, done.stderr
    assert read_rows(db_copy, "SELECT t.state FROM label_training t JOIN labels l ON l.id = t.label_id "
                              "WHERE l.name = 'ADVP'") == [("stopped",)]


def test_a_second_trainer_leaves_claimed_labels_alone_and_trains_the_others(
        db_copy: Path, sleeper: Callable[[], int]) -> None:
    from datetime import datetime, timezone

    pid = sleeper()
    time.sleep(1.1)  # the claim is written after its process started, as a real trainer's is
    claim_for(db_copy, "ADVP", pid, datetime.now(timezone.utc).isoformat(timespec="seconds"))
    done = clparse("train", "--db", db_copy, "--labels", "ADVP,ADJP", "--until-theta", "2.5")
    assert done.returncode == 1
    assert (f"warning: label ADVP left alone: label ADVP is being trained by process {pid}; stop it first "
            "(or wait for it)") in done.stderr.splitlines()
    states = dict(read_rows(db_copy, "SELECT l.name, t.state FROM label_training t JOIN labels l ON l.id = "
                                     "t.label_id WHERE l.name IN ('ADVP', 'ADJP')"))
    assert states == {"ADVP": "training", "ADJP": "stopped"}


def test_trainer_alive_tells_a_reused_pid_apart() -> None:
    from datetime import datetime, timezone

    from clparse.train.process import claim_note, trainer_alive

    me = os.getpid()
    assert trainer_alive(me, datetime.now(timezone.utc).isoformat(timespec="seconds"))
    assert not trainer_alive(me, "2000-01-01T00:00:00+00:00")  # this process started long after that claim
    assert not trainer_alive(None, None)
    # A claim written on another host cannot be judged from here: it holds (the safe side).
    assert trainer_alive(me, "2000-01-01T00:00:00+00:00", "training on some-other-host as pid 12")
    assert not trainer_alive(me, "2000-01-01T00:00:00+00:00", claim_note())  # this host: judged as above


def test_a_claim_names_its_host_and_pid(db_copy: Path) -> None:
    """While a label trains, its message says where (status --json shows it; a refusal quotes it)."""
    import socket

    from clparse.store.training import TrainingStore
    from clparse.train.process import claim_note, trainer_alive

    store = TrainingStore(db_copy)
    settings = store.state("ADVP").settings
    store.claim("ADVP", settings, trainer_alive, claim_note())
    store.close()
    (message,), = read_rows(db_copy, "SELECT t.message FROM label_training t JOIN labels l "
                                     "ON l.id = t.label_id WHERE l.name = 'ADVP'")
    assert message == f"training on {socket.gethostname()} as pid {os.getpid()}"


# ----------------------------------------------------------------------------- 2. worker start-up


def test_a_worker_checks_its_parent_before_importing_the_trainer() -> None:
    code = ("import sys\nfrom clparse.train import worker\n"
            "assert 'numpy' not in sys.modules and 'sqlalchemy' not in sys.modules, "
            "'heavy imports at start-up'\n"
            "worker.die_with_parent(1)\n"  # pid 1 is not our parent: the parent is gone, so exit at once
            "print('still running')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


# ----------------------------------------------------------------------------- 13. start-up


@pytest.mark.parametrize("args", [["--help"], ["sql", "SELECT 1"], ["status"]], ids=["help", "sql", "status"])
def test_quick_commands_do_not_import_the_trainer(trained_db: Path, args: list[str]) -> None:
    """numba, scipy, the booster (seconds under load) and Alembic: these commands never need them."""
    argv = (["clparse", *args] if args == ["--help"]
            else ["clparse", args[0], "--db", str(trained_db), *args[1:]])
    code = ("import sys\nfrom clparse.cli import main\n"
            f"sys.argv = {argv!r}\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "heavy = sorted(m for m in ('numba', 'scipy', 'clparse.boost', 'matplotlib', 'nltk', 'alembic')\n"
            "               if m in sys.modules)\n"
            "print('heavy:', heavy, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "heavy: []"


def test_eval_reads_an_empty_line_parse_as_an_empty_parse(tmp_path: Path) -> None:
    """Item 11: parse output for an empty input line, (ROOT), is scored like EVALB's empty parse."""
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.ptb"
    gold.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n(ROOT (S (NP (PRP You)) (VP (VBD sat))))\n")
    test.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n(ROOT)\n")
    done = clparse("eval", gold, test, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "warning: 1 empty parse(s) skipped, as EVALB does\n"
    assert '"skipped_sentences": 1' in done.stdout


def children_of(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_killing_the_parent_while_workers_start_leaves_no_orphans(db_copy: Path) -> None:
    """SIGKILL the trainer as soon as its workers exist (they are still importing numba): none may go on
    to train its label (before, they trained to the end and kept their labels claimed)."""
    process = subprocess.Popen([str(BIN / "clparse"), "train", "--db", str(db_copy), "--jobs", "2",
                                "--until-theta", "0.05"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while not workers and time.monotonic() < deadline and process.poll() is None:
        workers = children_of(process.pid)
        time.sleep(0.01)
    assert workers, "no worker process was seen"
    process.kill()
    process.wait()
    trees = "SELECT count(*) FROM iterations"
    (before,), = read_rows(db_copy, trees)
    deadline = time.monotonic() + 240
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in workers), "orphan workers still running"
    (after,), = read_rows(db_copy, trees)
    # ≤ 1 in flight each
    assert after - before <= len(workers), f"orphans trained {after - before} more trees"


def test_train_shows_labels_done_on_a_terminal(db_copy: Path) -> None:
    status, _, shown = run_on_terminal([str(BIN / "clparse"), "train", "--db", str(db_copy), "--labels",
                                        "ADVP,ADJP", "--until-theta", "2.5"], "", ENV)
    assert status == 0, shown
    assert "training: 2/2 labels (100 %)" in shown
    done = clparse("train", "--db", db_copy, "--labels", "ADVP,ADJP", "--until-theta", "2")
    assert done.returncode == 0 and "training:" not in done.stderr  # a log gets no progress lines


def test_calibrate_thetas_are_checked_and_named(trained_db: Path) -> None:
    """Was a ValueError traceback."""
    done = clparse("calibrate", "--db", trained_db, "--thetas", "20,abc")
    assert one_error(done, 2) == ("Error: Invalid value for '--thetas': '20,abc' is not a comma-separated "
                                  "list of numbers")
