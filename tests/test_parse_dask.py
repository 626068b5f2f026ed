"""``parse --dask ADDRESS`` (issue 26, item 3): the same bytes, warnings and order as one process, on a
Dask cluster whose workers open the database at the client's path.

One LocalCluster of two single-threaded worker processes serves the module (the same path a real
cluster takes: ``--dask tcp://...``). Chunks and the window are made small
(:data:`clparse.parse_dask.CHUNK`, :data:`clparse.parse_dask.WINDOW`), so that the dev sample spreads
over many tasks, several in flight on both workers, handed back out of step.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

distributed = pytest.importorskip("distributed")

# E402: after the importorskip above on purpose. F401/F811: fixtures of tests.test_parse_jobs, imported so
# that this module's tests get them.
from clparse import api  # noqa: E402
from clparse.errors import ClparseError  # noqa: E402
from tests.test_parse_jobs import DEV, SEARCH, inputs, invoke, one_process  # noqa: E402, F401


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clparse.parse_dask.CHUNK", 4)
    monkeypatch.setattr("clparse.parse_dask.WINDOW", 2)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as local:
        yield local


@pytest.fixture
def client(cluster: Any) -> Iterator[Any]:
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as connected:
        yield connected


class Break(distributed.WorkerPlugin):
    """On a worker: opening the parser fails (RuntimeError), or, with ``kill_marker``, the worker is
    SIGKILLed as it starts its first parse task of the run (once: the marker file says it happened)."""

    def __init__(self, kill_marker: str | None = None) -> None:
        self.kill_marker = kill_marker

    def setup(self, worker: Any) -> None:
        import clparse.parse_dask as module

        self.saved = module.open_worker_parser
        module._PARSERS.clear()
        if self.kill_marker is None:
            def refuse(*args: Any) -> Any:
                raise RuntimeError("no model\nhere")  # two lines: the error must still be one

            module.open_worker_parser = refuse

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if self.kill_marker is None or finish != "executing" or not str(key).startswith("clparse-parse-"):
            return
        if not os.path.exists(self.kill_marker):
            Path(self.kill_marker).write_text(f"{key}\n")
            os.kill(os.getpid(), signal.SIGKILL)  # a worker lost in the middle of the run

    def teardown(self, worker: Any) -> None:
        import clparse.parse_dask as module

        module.open_worker_parser = self.saved


@pytest.mark.parametrize("case", ["ptb", "tokens", "tagged"])
def test_cli_dask_gives_the_bytes_and_warnings_of_one_process(trained_db: Path, cluster: Any,
                                                              inputs: dict[str, tuple[str, Path]],  # noqa: F811
                                                              one_process: Callable[[str], Result],  # noqa: F811
                                                              case: str) -> None:
    fmt, path = inputs[case]
    expected = one_process(case)
    result = invoke(["parse", "--db", trained_db, *SEARCH, "--input-format", fmt, path,
                     "--dask", cluster.scheduler_address])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected.stdout
    assert result.stderr == expected.stderr
    assert "warning: sentence" in expected.stderr and "completed greedily at the pop cap" in expected.stderr


def test_api_dask_gives_the_same_results_and_tally(trained_db: Path, cluster: Any) -> None:
    def run(**where: Any) -> tuple[list[Any], list[str], api.ParseTally]:
        warnings: list[str] = []
        tally = api.ParseTally()
        results = list(api.parse(trained_db, [str(DEV)], "ptb", theta=3.0, beam=2, max_pops=2, max_words=12,
                                 warn=warnings.append, tally=tally, **where))
        return results, warnings, tally

    one, one_warnings, one_tally = run()
    there, there_warnings, there_tally = run(dask=cluster.scheduler_address)
    assert [str(r.tree) for r in there] == [str(r.tree) for r in one]
    assert [(r.tagged, r.fallback, r.pops, r.completion) for r in there] == \
           [(r.tagged, r.fallback, r.pops, r.completion) for r in one]
    assert there_warnings == one_warnings and there_tally == one_tally
    assert one_tally.fallbacks and one_tally.completions


def cached_parsers() -> list[int]:
    """Run on a worker: the ids of the parsers it keeps."""
    import clparse.parse_dask as module

    return [id(parser) for parser in module._PARSERS.values()]


def forget_parsers() -> None:
    import clparse.parse_dask as module

    module._PARSERS.clear()


def test_workers_keep_their_parser_between_chunks_and_runs(trained_db: Path, cluster: Any,
                                                           client: Any) -> None:
    client.run(forget_parsers)
    run = lambda: list(api.parse(trained_db, [str(DEV)], "ptb", theta=3.0, beam=1,  # noqa: E731
                                 dask=cluster.scheduler_address))
    run()
    first = client.run(cached_parsers)
    assert all(len(ids) <= 1 for ids in first.values()) and any(first.values()), first
    run()  # the same database, Θ̂ and options: the same parser objects
    assert client.run(cached_parsers) == first


def test_cli_unreachable_scheduler_is_one_error_line(trained_db: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clparse.parse_dask.CONNECT_TIMEOUT", 2.0)
    result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "ptb", DEV,
                     "--dask", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [line for line in result.stderr.splitlines() if "Error" in line], result.stderr
    assert len(errors) == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in errors[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_cli_bad_address_and_jobs_with_dask_are_refused(trained_db: Path) -> None:
    bad = invoke(["parse", "--db", trained_db, "--dask", "somewhere", DEV])
    assert bad.exit_code == 2 and "Invalid value for '--dask'" in bad.stderr
    both = invoke(["parse", "--db", trained_db, "--dask", "local:2", "--jobs", "2", DEV])
    assert both.exit_code == 2 and "--dask and --jobs cannot be combined" in both.stderr


def test_api_jobs_with_dask_is_a_parameter_error(trained_db: Path) -> None:
    from clparse.errors import ParameterError

    with pytest.raises(ParameterError, match="jobs"):
        list(api.parse(trained_db, [str(DEV)], "ptb", theta=3.0, jobs=2, dask="tcp://127.0.0.1:9"))


def test_api_a_database_the_workers_cannot_see_is_one_error(copy_trained_db: Callable[[], Path],
                                                            cluster: Any) -> None:
    db = copy_trained_db()
    parser = api.open_parser(db, 3.0, beam=1)
    for path in db.parent.glob(db.name + "*"):
        path.unlink()  # the workers open the file at this path: gone
    with pytest.raises(ClparseError, match=r"Dask worker tcp://\S+, parsing sentences 1–4: could not start: "
                                           r".*copy\.sqlite is not there"):
        list(api.parse(parser, [str(DEV)], "ptb", dask=cluster.scheduler_address))


def test_cli_a_failing_worker_is_one_error_line(trained_db: Path, cluster: Any, client: Any) -> None:
    client.register_plugin(Break(), name="break")
    try:
        result = invoke(["parse", "--db", trained_db, "--theta", "3", "--beam", "1", "--input-format", "ptb",
                         DEV, "--dask", cluster.scheduler_address])
    finally:
        client.unregister_worker_plugin("break")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert "could not start: RuntimeError: no model here" in errors[0]
    assert "parsing sentences 1–4" in errors[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_worker_killed_mid_run_is_replaced_and_the_bytes_are_the_same(trained_db: Path, cluster: Any,
                                                                        client: Any, tmp_path: Path,
                                                                        one_process: Callable[[str], Result],  # noqa: F811
                                                                        inputs: dict[str, tuple[str, Path]],  # noqa: F811
                                                                        ) -> None:
    """SIGKILL a worker as it starts a chunk: the scheduler runs the chunk again on a worker (the nanny
    restarts the killed one), and the output is still that of one process."""
    marker = tmp_path / "killed"
    client.register_plugin(Break(str(marker)), name="kill")
    try:
        fmt, path = inputs["ptb"]
        result = invoke(["parse", "--db", trained_db, *SEARCH, "--input-format", fmt, path,
                         "--dask", cluster.scheduler_address])
        assert marker.exists(), "no worker was killed"
    finally:
        client.unregister_worker_plugin("kill")
        client.wait_for_workers(2, timeout=60)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == one_process("ptb").stdout and result.stderr == one_process("ptb").stderr


def test_only_the_cluster_modules_import_dask() -> None:
    from tests.test_layers import ROOT, imported_modules, sources

    users = {str(path.relative_to(ROOT)) for path in sources()
             if any(m.split(".")[0] in ("dask", "distributed") for m in imported_modules(path))}
    assert users == {"clparse/dask_address.py", "clparse/parse_dask.py", "clparse/train/cluster.py"}


def test_the_client_reads_only_a_window_of_chunks_ahead(trained_db: Path, cluster: Any) -> None:
    from clparse.parse_dask import parse_on_cluster

    parser = api.open_parser(trained_db, 3.0, beam=1)
    read = 0

    def sentences() -> Iterator[tuple[Any, int]]:
        nonlocal read
        for _ in range(3):  # 225 sentences: many more than the window
            for sentence in api.read_input([str(DEV)], "ptb"):
                read += 1
                yield sentence, read

    ahead = []
    for n, (result, number) in enumerate(parse_on_cluster(parser, sentences(), cluster.scheduler_address), 1):
        assert number == n and result.tree.label == "ROOT"
        ahead.append(read - n)
    assert n == read == 225
    assert max(ahead) <= 2 * 2 * 4  # WINDOW chunks per worker thread, CHUNK sentences each (as patched)
