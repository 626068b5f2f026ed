"""Faults a reviewer found in `clparse parse` and its Python API, one test each (fails before its fix)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clparse.errors import ConfigurationError
from clparse.parser import SearchOptions


@pytest.mark.parametrize("setting", [{"beam": 2.5}, {"max_pops": 1.5}, {"beam": "10"}, {"beam": True},
                                     {"kbest": 2.0}, {"max_words": 2.5}, {"tag_alternatives": 1.0}])
def test_search_options_refuse_what_is_not_a_whole_number(setting: dict[str, object]) -> None:
    # beam=2.5 from open_parser was a TypeError deep in the search; beam=True was greedy without a word
    name = next(iter(setting))
    with pytest.raises(ConfigurationError, match=f"{name} must be a whole number"):
        SearchOptions(**setting)  # type: ignore[arg-type]


def test_search_options_take_numpy_integers() -> None:
    assert SearchOptions(beam=np.int64(5)).beam == 5


@pytest.mark.parametrize("where", ["missing/out.txt", "."])
def test_output_that_cannot_be_opened_is_named_before_the_model_loads(tmp_path: Path, where: str) -> None:
    # -o opens at the first tree: a missing directory failed only after the model had loaded, as click's
    # "Could not open file"; now it is refused first (the database here is not even opened)
    from tests.conftest import invoke_cli

    (tmp_path / "in.txt").write_text("The dog barked .\n", encoding="utf-8")
    result = invoke_cli(["parse", "--db", tmp_path / "absent.sqlite", tmp_path / "in.txt",
                         "-o", tmp_path / where])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]  # one line
    assert f"-o {tmp_path / where}" in result.stderr and "directory" in result.stderr
