"""Faults a reviewer found in `clparse browse` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import invoke_cli


@pytest.mark.parametrize("port", ["8001", "0"])
@pytest.mark.parametrize("host", ["nosuch.invalid", "192.0.2.1"])
def test_a_host_that_cannot_be_listened_on_is_named_as_host(db_copy: Path, host: str, port: str) -> None:
    # a name that does not resolve was "Invalid value for '--port': ... pick another --port" (and with
    # --port 0, "Error: Name or service not known", naming neither); an address not of this machine the same
    pytest.importorskip("datasette")
    result = invoke_cli(["browse", "--db", db_copy, "--check", "--host", host, "--port", port])
    assert result.exit_code == 2, result.output
    assert "'--host'" in result.stderr and host in result.stderr, result.stderr
    assert "pick another --port" not in result.stderr


def test_a_port_in_use_is_still_named_as_port(db_copy: Path) -> None:
    pytest.importorskip("datasette")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke_cli(["browse", "--db", db_copy, "--check", "--port", port])
    assert result.exit_code == 2, result.output
    assert "'--port'" in result.stderr and "pick another --port" in result.stderr, result.stderr
