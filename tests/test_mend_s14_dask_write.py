"""The session-14 clean-ups: one Dask connection for ``train --dask`` and ``parse --dask``
(:mod:`clparse.dask_address`), one whole-or-nothing file writer (:mod:`clparse.atomic_write`)."""

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


# ------------------------------------------------------------------ write_whole


def test_write_whole_leaves_the_target_and_no_scratch_when_the_callback_raises(tmp_path: Path) -> None:
    from clparse.atomic_write import write_whole

    target = tmp_path / "out.txt"
    target.write_text("before\n")
    given: list[Path] = []

    def half(where: Path) -> None:
        given.append(where)
        where.write_text("half of it")
        raise ValueError("stopped half-way")

    with pytest.raises(ValueError, match="stopped half-way"):
        write_whole(target, half, kept="; nothing written")
    assert given[0].parent == tmp_path and given[0] != target  # a scratch file beside the target
    assert target.read_text() == "before\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    write_whole(target, lambda where: where.write_bytes(b"after\n"))
    assert target.read_bytes() == b"after\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    missing = tmp_path / "missing" / "x.txt"  # an OSError: one line naming the file, and what was kept
    with pytest.raises(ClparseError, match=re.escape(f"{missing}: No such file or directory; kept")):
        write_whole(missing, lambda where: where.write_bytes(b"x"), kept="; kept")


def test_treebank_preprocess_into_a_pipe_or_a_link_writes_through_it(tmp_path: Path) -> None:
    """-o a named pipe (or /dev/stdout, /dev/null) was replaced by a regular file: as root the device
    itself (/dev/null became a file), as anyone else a refusal (Permission denied) in /dev; -o a symbolic
    link was replaced by a regular file, and its target kept the old trees. ``report --plot`` wrote
    through both."""
    import os
    import stat
    import threading

    from clparse.data import sample_path

    expected = invoke_cli(["treebank", "preprocess", sample_path("dev")]).stdout
    pipe = tmp_path / "trees.fifo"
    os.mkfifo(pipe)
    read: list[str] = []

    def reader() -> None:
        with open(pipe, encoding="utf-8") as handle:
            read.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    result = invoke_cli(["treebank", "preprocess", sample_path("dev"), "-o", pipe])
    thread.join(timeout=10)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(pipe).st_mode) and read == [expected]
    real, link = tmp_path / "real.ptb", tmp_path / "link.ptb"
    real.write_text("old\n")
    link.symlink_to(real.name)
    result = invoke_cli(["treebank", "preprocess", sample_path("dev"), "-o", link])
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and real.read_text(encoding="utf-8") == expected
