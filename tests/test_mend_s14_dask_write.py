"""The session-14 clean-ups: one Dask connection for ``train --dask`` and ``parse --dask``
(:mod:`clparse.dask_address`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from clparse.errors import ClparseError
from tests.conftest import invoke_cli


def _refuse(**kwargs: Any) -> None:
    raise RuntimeError("Nanny failed to start.")


def test_train_local_cluster_that_cannot_start_is_one_error(monkeypatch: pytest.MonkeyPatch,
                                                            prepared: Path) -> None:
    """api.train(dask="local:N") from a script without a main guard, or any local cluster that cannot
    start: train gave Dask's traceback ending in "RuntimeError: Nanny failed to start." (parse said it in
    one line)."""
    distributed = pytest.importorskip("distributed")
    from clparse.train.cluster import connect

    monkeypatch.setattr(distributed, "LocalCluster", _refuse)
    message = ("could not start the local Dask cluster local:2: Nanny failed to start; from a script, train "
               "under `if __name__ == '__main__':`")
    with pytest.raises(ClparseError, match=re.escape(message)):
        connect("local:2")
    result = invoke_cli(["train", "--db", prepared, "--dask", "local:2", "--labels", "NP",
                         "--max-iterations", "1"])
    assert result.exit_code == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if "Error" in line]
    assert len(errors) == 1 and errors[0].startswith(f"Error: {message}"), result.stderr
    assert "Traceback" not in result.stderr

