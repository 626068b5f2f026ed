"""``parse --jobs N`` (issue 26, item 3): the same bytes, warnings and order as one process.

Everything reads the session's ``trained_db`` at Θ̂ = 3 with beam 1 (fast). Chunks are made small
(:data:`clparse.parse_jobs.CHUNK`) so that the bundled dev sample spreads over many chunks and every
worker gets several, out of step with the others.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clparse import api
from clparse.cli import main
from clparse.data import sample_path
from clparse.errors import ClparseError
from clparse.parser import ParseResult
from clparse.read.tree import Tree

ROOT = Path(__file__).resolve().parents[1]
DEV = sample_path("dev")
# max-words 12: the longer sentences get flat fallbacks; beam 2 with max-pops 2: completions at the cap
SEARCH = ["--theta", "3", "--beam", "2", "--max-pops", "2", "--max-words", "12"]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clparse.parse_jobs.CHUNK", 4)


def invoke(args: Sequence[object], stdin: str | None = None) -> Result:
    """The CLI in-process, stdout and stderr apart (whatever click's version)."""
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:  # click < 8.2
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    else:
        runner = CliRunner()
    return runner.invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path]]:
    """(input format, file) per case: the dev sample as trees, tokens with empty lines, tagged words with a
    tag never seen in training."""
    from clparse.read import read_trees

    folder = tmp_path_factory.mktemp("jobs-input")
    trees = list(read_trees(DEV))[:40]
    tokens = [" ".join(w for w, t in tree.tagged_words() if t != "-NONE-") for tree in trees]
    tokens.insert(3, "")
    tokens.insert(17, "   ")
    (folder / "tokens.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    tagged = [" ".join(f"{w}/{t}" for w, t in tree.tagged_words() if t != "-NONE-") for tree in trees]
    tagged[5] = tagged[5] + " zork/NEVERSEEN"
    tagged.insert(9, "")
    (folder / "tagged.txt").write_text("\n".join(tagged) + "\n", encoding="utf-8")
    return {"ptb": ("ptb", DEV), "tokens": ("tokens", folder / "tokens.txt"),
            "tagged": ("tagged", folder / "tagged.txt")}


@pytest.fixture(scope="module")
def one_process(trained_db: Path, inputs: dict[str, tuple[str, Path]]) -> Callable[[str], Result]:
    """The --jobs 1 run of each case, computed once."""
    done: dict[str, Result] = {}

    def run(case: str) -> Result:
        if case not in done:
            fmt, path = inputs[case]
            done[case] = invoke(["parse", "--db", trained_db, *SEARCH, "--input-format", fmt, path])
            assert done[case].exit_code == 0, done[case].stderr
        return done[case]

    return run


@pytest.mark.parametrize(("case", "jobs", "start"), [("ptb", 2, "fork"), ("ptb", 3, "fork"),
                                                    ("tokens", 2, "fork"), ("tagged", 3, "fork"),
                                                    ("tokens", 2, "spawn")])
def test_cli_jobs_give_the_bytes_and_warnings_of_one_process(trained_db: Path,
                                                             inputs: dict[str, tuple[str, Path]],
                                                             one_process: Callable[[str], Result],
                                                             case: str, jobs: int, start: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # fork: workers with the parent's parser (Linux's default here); spawn: each rebuilds it from the file
    monkeypatch.setattr("clparse.parse_jobs.START", start)
    fmt, path = inputs[case]
    expected = one_process(case)
    result = invoke(["parse", "--db", trained_db, *SEARCH, "--input-format", fmt, path, "--jobs", jobs])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected.stdout
    # no timing on stderr off a terminal: all of it is equal, but for the note on more jobs than CPUs
    assert _without_cpu_note(result.stderr) == expected.stderr
    assert "warning: sentence" in expected.stderr  # the case does warn (flat fallbacks)
    if case != "ptb":
        assert "empty line" in expected.stderr


def _without_cpu_note(stderr: str) -> str:
    lines = stderr.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("warning: --jobs"))


def test_cli_more_jobs_than_cpus_is_one_warning_and_too_many_an_error(
        trained_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clparse.cli.parsing.os.cpu_count", lambda: 1)
    result = invoke(["parse", "--db", trained_db, *SEARCH, "--input-format", "ptb", DEV, "--jobs", "2"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("warning: --jobs 2 on 1 CPU(s)") == 1
    too_many = invoke(["parse", "--db", trained_db, "--jobs", "65", DEV])
    assert too_many.exit_code == 2 and "--jobs" in too_many.stderr and "64" in too_many.stderr


def test_cli_bad_line_stops_after_the_lines_before_it_as_one_process_does(trained_db: Path,
                                                                          tmp_path: Path) -> None:
    lines = [f"The/DT dog/NN number/NN {i}/CD barked/VBD ./." for i in range(10)]
    lines += ["bad token"] + ["a/DT"] * 5
    text = "\n".join(lines) + "\n"
    base = ["parse", "--db", trained_db, *SEARCH, "--input-format", "tagged"]  # stdin: read as it goes
    one, two = invoke(base, text), invoke([*base, "--jobs", "2"], text)
    assert one.exit_code == two.exit_code == 1
    assert len(one.stdout.splitlines()) == 10 and two.stdout == one.stdout
    assert _without_cpu_note(two.stderr) == one.stderr and "is not word/TAG" in two.stderr


def test_api_jobs_give_the_same_results_and_types(trained_db: Path) -> None:
    def run(jobs: int) -> tuple[list[ParseResult], list[str], api.ParseTally]:
        warnings: list[str] = []
        tally = api.ParseTally()
        results = list(api.parse(trained_db, [str(DEV)], "ptb", theta=3.0, beam=2, max_pops=2, max_words=12,
                                 warn=warnings.append, tally=tally, jobs=jobs))
        return results, warnings, tally

    one, one_warnings, one_tally = run(1)
    two, two_warnings, two_tally = run(2)
    assert all(isinstance(r, ParseResult) and isinstance(r.tree, Tree) for r in two)
    assert [r.tree for r in two] == [r.tree for r in one]
    assert [(r.tagged, r.fallback, r.pops, r.completion) for r in two] == \
           [(r.tagged, r.fallback, r.pops, r.completion) for r in one]
    assert two_warnings == one_warnings and two_tally == one_tally
    assert one_tally.fallbacks and one_tally.completions


def test_api_a_worker_that_cannot_start_is_one_error(copy_trained_db: Callable[[], Path],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clparse.parse_jobs.START", "spawn")
    db = copy_trained_db()
    parser = api.open_parser(db, 3.0, beam=1)
    for path in db.parent.glob(db.name + "*"):
        path.unlink()  # spawned workers open the file again: gone
    with pytest.raises(ClparseError, match=r"parse worker \d of 2: could not start"):
        list(api.parse(parser, [str(DEV)], "ptb", jobs=2))


def test_api_forked_workers_parse_with_the_parents_model(copy_trained_db: Callable[[], Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # A forked worker never reopens the database for gold-tagged input: the file may be gone by then.
    monkeypatch.setattr("clparse.parse_jobs.START", "fork")
    db = copy_trained_db()
    parser = api.open_parser(db, 3.0, beam=1)
    expected = [str(r.tree) for r in api.parse(parser, [str(DEV)], "ptb")]
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    assert [str(r.tree) for r in api.parse(parser, [str(DEV)], "ptb", jobs=2)] == expected


def test_api_jobs_must_be_at_least_one(trained_db: Path) -> None:
    from clparse.errors import ParameterError

    with pytest.raises(ParameterError, match="jobs"):
        list(api.parse(trained_db, [str(DEV)], "ptb", theta=3.0, jobs=0))


def workers_of(pid: int) -> list[int]:
    """The worker processes of ``pid``, forked or spawned (multiprocessing's resource tracker left out)."""
    found = []
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in command:
            found.append(int(child))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cli_a_worker_killed_mid_run_is_one_error_line(trained_db: Path, tmp_path: Path) -> None:
    trees = DEV.read_text(encoding="utf-8")
    big = tmp_path / "big.ptb"
    big.write_text(trees * 20, encoding="utf-8")  # 1,500 sentences: far more than the chunks in flight
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # each tree reaches the file as it is written
    args = [sys.executable, str(ROOT / "cli.py"), "parse", "--db", str(trained_db), "--theta", "3",
            "--beam", "1", "--input-format", "ptb", str(big), "--jobs", "2", "-o", str(out)]
    with open(tmp_path / "err", "wb") as err:
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            deadline = time.monotonic() + 300
            while not (out.exists() and out.stat().st_size > 0):  # the first results are in: mid-run
                assert process.poll() is None and time.monotonic() < deadline, "no output in time"
                time.sleep(0.02)
            victims = workers_of(process.pid)
            assert len(victims) == 2
            os.kill(victims[0], signal.SIGKILL)
            process.wait(timeout=120)  # an error, not a hang
        finally:
            if process.poll() is None:
                process.kill()
    stderr = (tmp_path / "err").read_text(encoding="utf-8")
    assert process.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and " died" in errors[0] \
        and "killed by SIGKILL (signal 9), most often the kernel's out-of-memory killer" in errors[0], stderr
    assert "Traceback" not in stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) < 1500
    deadline = time.monotonic() + 10
    while running(victims[1]):  # the other worker was stopped too
        assert time.monotonic() < deadline, "the other worker outlived the run"
        time.sleep(0.1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_forked_workers_end_when_their_parent_dies_without_the_death_signal(trained_db: Path,
                                                                            tmp_path: Path) -> None:
    # Where the kernel sends no signal when the parent dies (BSDs), a worker must still end: the pipe's
    # far end closes with the parent, as no worker keeps a copy of it.
    big = tmp_path / "big.ptb"
    big.write_text(DEV.read_text(encoding="utf-8") * 20, encoding="utf-8")
    code = ("import sys\nimport clparse.parse_jobs as jobs\n"
            "jobs.START = 'fork'\njobs.die_with_parent = lambda parent: None\n"
            "from clparse import api\n"
            f"for result in api.parse({str(trained_db)!r}, [{str(big)!r}], 'ptb', theta=3.0, beam=1,\n"
            "                        jobs=2):\n"
            "    print(result.tree, flush=True)\n")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None and process.stdout.readline()  # mid-run: trees are coming
        victims = workers_of(process.pid)
        assert len(victims) == 2
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    deadline = time.monotonic() + 30
    while any(running(pid) for pid in victims):
        assert time.monotonic() < deadline, "a worker outlived its parent"
        time.sleep(0.1)


def test_workers_fork_only_where_it_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from clparse import parse_jobs

    monkeypatch.setattr(parse_jobs, "START", None)
    monkeypatch.setattr(parse_jobs.sys, "platform", "darwin")  # lists fork, but forked children may crash
    assert parse_jobs.start_method() == "spawn"
    monkeypatch.setattr(parse_jobs.sys, "platform", "linux")
    if "fork" in parse_jobs.multiprocessing.get_all_start_methods():
        assert parse_jobs.start_method() == ("fork" if threading.active_count() == 1 else "spawn")
        monkeypatch.setattr(parse_jobs.threading, "active_count", lambda: 2)  # another thread runs
        assert parse_jobs.start_method() == "spawn"


def running(pid: int) -> bool:
    """Is ``pid`` a live process (not gone, not a zombie awaiting its parent)?"""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(("case", "args"), [("tokens", ["--format", "json", "--kbest", "4"]),
                                            ("ptb", ["--format", "pretty", "--kbest", "3"]),
                                            ("text", ["--format", "json", "--kbest", "3"])])
def test_cli_jobs_give_the_bytes_of_one_process_in_every_format(trained_db: Path, tmp_path: Path,
                                                                 inputs: dict[str, tuple[str, Path]],
                                                                 case: str, args: list[str]) -> None:
    """Every field of a result crosses between processes: k-best trees, scores, confidences, offsets."""
    if case == "text":
        path = tmp_path / "text.txt"
        path.write_text('The dog barked. "It didn\'t stop," she said (twice).\n\nDr. Smith left. ' * 6,
                        encoding="utf-8")
        fmt = "text"
    else:
        fmt, path = inputs[case]
    base = ["parse", "--db", trained_db, "--theta", "3", "--beam", "8", "--max-words", "12",
            "--input-format", fmt, *args, path]
    one, two = invoke(base), invoke([*base, "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0, one.stderr + two.stderr
    assert two.stdout == one.stdout and two.stderr == one.stderr
    if "json" in args:  # the fields that must cross are there
        data = [json.loads(line) for line in one.stdout.splitlines()]
        assert any(len(entry["trees"]) > 1 for entry in data)
        assert any(c["confidence"] is not None and c["share"] is not None
                   for entry in data for tree in entry["trees"] for c in tree["constituents"])
        assert all((entry["offsets"] is not None) == (case == "text") for entry in data)


def test_forked_workers_start_with_the_parents_objects_frozen_and_the_parent_unfreezes(
        trained_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # gc.freeze() before the fork keeps a worker's collections off the pages it shares with its parent;
    # the parent must not stay frozen after the run (its cyclic garbage would never be collected).
    import gc

    import clparse.parse_jobs as parse_jobs

    monkeypatch.setattr(parse_jobs, "START", "fork")
    original = parse_jobs.worker

    def recording_worker(*args: object, **kwargs: object) -> None:
        (tmp_path / f"frozen.{os.getpid()}").write_text(str(gc.get_freeze_count()))
        original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_jobs, "worker", recording_worker)
    parser = api.open_parser(trained_db, 3.0, beam=1)
    before = gc.get_freeze_count()
    expected = [str(r.tree) for r in api.parse(parser, [str(DEV)], "ptb")]
    assert [str(r.tree) for r in api.parse(parser, [str(DEV)], "ptb", jobs=2)] == expected
    counts = [int(path.read_text()) for path in tmp_path.glob("frozen.*")]
    assert len(counts) == 2 and all(count > 1000 for count in counts)
    assert gc.get_freeze_count() == before


def test_a_failed_parallel_run_leaves_the_parent_unfrozen(copy_trained_db: Callable[[], Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    monkeypatch.setattr("clparse.parse_jobs.START", "fork")
    parser = api.open_parser(copy_trained_db(), 3.0, beam=1)
    monkeypatch.setattr("clparse.parse_jobs.plain", lambda result: 1 / 0)  # every worker fails at once
    before = gc.get_freeze_count()
    with pytest.raises(ClparseError, match="parse worker"):
        list(api.parse(parser, [str(DEV)], "ptb", jobs=2))
    assert gc.get_freeze_count() == before
