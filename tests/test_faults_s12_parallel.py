"""Faults a user met in the parallel and cluster paths (``parse --jobs``, ``parse --dask``, ``train --dask``),
each fixed and kept fixed here."""

from __future__ import annotations

from typing import Any

import pytest

from clparse.dask_address import check_address
from clparse.errors import ClparseError, ParameterError


@pytest.mark.parametrize("address", ["foo://x", "inproc://x", "tcp://[::1", "tcp://:8786",
                                     "tcp://host:99999", "tcp://host:0", "local:65", "local:1000", "tcp://",
                                     "local:0", "local:abc"])
def test_malformed_addresses_are_refused_before_dask(address: str) -> None:
    # foo:// and tcp://[::1 were a traceback from inside Dask once the model had loaded; a port out of range
    # a 30 s wait; local:1000 tried to start 1,000 worker processes on this machine
    with pytest.raises(ParameterError, match="dask"):
        check_address(address)


@pytest.mark.parametrize("address", ["local:1", "local:64", "tcp://10.1.2.3:8786", "tcp://[::1]:8786",
                                     "tls://node-1.example.org:8786", "tcp://host"])
def test_good_addresses_pass(address: str) -> None:
    assert check_address(address) == address


def test_cli_unknown_scheme_is_a_usage_error(tmp_path: Any) -> None:
    from tests.test_parse_jobs import DEV, invoke

    db = tmp_path / "absent.sqlite"
    for command in (["parse", "--db", db, "--dask", "foo://x", DEV], ["train", "--db", db, "--dask", "foo://x"]):
        result = invoke(command)
        assert result.exit_code == 2, result.stderr
        assert "unknown scheme foo://" in result.stderr and "Traceback" not in result.stderr


class _Refusing:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise OSError("Timed out trying to connect to tcp://127.0.0.1:9 after 60 s")


def test_train_unreachable_scheduler_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # train said only Dask's "Timed out trying to connect ..." (parse --dask names the scheduler)
    distributed = pytest.importorskip("distributed")
    from clparse.train.cluster import connect

    monkeypatch.setattr(distributed, "Client", _Refusing)
    with pytest.raises(ClparseError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        connect("tcp://127.0.0.1:9")


class _LostClient:
    """A client whose scheduler went away: reconnecting, then closed with no worker list."""

    def __init__(self, status: str) -> None:
        self.status = status

    def scheduler_info(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize("status", ["connecting", "closed"])
def test_train_lost_scheduler_is_one_error_not_a_keyerror(status: str) -> None:
    # was KeyError: 'workers' (a traceback) after a minute, and meanwhile every cancelled batch counted
    # against its label as a lost worker
    pytest.importorskip("distributed")
    from clparse.train.cluster import Coordinator

    coordinator = Coordinator.__new__(Coordinator)
    coordinator.client, coordinator.seen = _LostClient(status), 0.0
    coordinator.stats = type("Stats", (), {"address": "tcp://127.0.0.1:9"})()
    with pytest.raises(ClparseError, match="lost the Dask scheduler at tcp://127.0.0.1:9.*run the same"):
        coordinator.refresh_workers()


def test_local_cluster_workers_keep_warnings_off_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C on parse --dask local:N reaches the workers too (one process group): each logged its cancelled
    # tasks and the nanny its kill, three warnings with coroutine reprs before the one Error line
    import logging

    distributed = pytest.importorskip("distributed")
    from clparse import parse_dask
    from clparse.train import cluster

    seen: list[dict[str, Any]] = []

    class Cluster:
        def __init__(self, **kwargs: Any) -> None:
            seen.append(kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(distributed, "Client", lambda *args, **kwargs: None)
    parse_dask.connect("local:2")
    cluster.connect("local:2")
    assert [kwargs.get("silence_logs") for kwargs in seen] == [logging.ERROR, logging.ERROR]


class _CancelledFuture:
    """A chunk's future as Dask leaves it when the client loses its scheduler."""

    def result(self, timeout: float | None = None) -> Any:
        raise type("FutureCancelledError", (Exception,), {})(
            "cancelled for reason: scheduler-connection-lost. Client lost the connection to the scheduler.")


def test_parse_lost_scheduler_is_said_as_such() -> None:
    # was "parsing sentences 1–4 on the Dask cluster at ... failed: FutureCancelledError: ..." after Dask's
    # own ERROR log line; a scheduler gone is not a failure of those sentences
    from clparse.parse_dask import _result

    with pytest.raises(ClparseError, match=r"^lost the Dask scheduler at tcp://h:1 while parsing"):
        _result(_CancelledFuture(), 1, 4, "tcp://h:1", _LostClient("connecting"))


class _WaitingFuture:
    def __init__(self) -> None:
        self.calls = 0

    def result(self, timeout: float | None = None) -> Any:
        self.calls += 1
        if self.calls < 3:
            raise TimeoutError
        return "done", [], "tcp://w:1"


class _EmptyClient:
    status = "running"

    def nthreads(self) -> dict[str, int]:
        return {}


def test_parse_on_a_scheduler_without_workers_says_it_waits() -> None:
    # a scheduler with no worker left parse --dask silent after its first line, for ever
    from clparse.parse_dask import _result

    said: list[str] = []
    assert _result(_WaitingFuture(), 1, 4, "tcp://h:1", _EmptyClient(), said.append) == []
    assert said == ["the Dask scheduler at tcp://h:1 has no worker yet: waiting for one to join"]
