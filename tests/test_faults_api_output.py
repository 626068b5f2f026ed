"""The JSON form of a parse reads back to the same result (clparse.output.from_dict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.output import format_result, from_dict, to_dict
from clparse.parser import Parser


@pytest.mark.parametrize("kbest", [1, 3])
@pytest.mark.parametrize("beam", [1, 5])
def test_from_dict_without_kbest_gives_the_same_output(trained_db: Path, kbest: int, beam: int) -> None:
    """A k-best line read back with ``from_dict(data)`` had no shares and was written as one tree (its
    ``kbest`` defaulted to 1), also when the beam found a single tree."""
    parser = Parser.from_db(trained_db, theta=3.0, beam=beam, kbest=kbest)
    for sentence in ("The dog barked .", "", "She saw the cat in the garden ."):
        result = parser.parse(sentence)
        data = to_dict(result)
        again = from_dict(data)
        assert to_dict(again) == data
        for fmt in ("ptb", "pretty", "json"):
            assert format_result(again, fmt, 1) == format_result(result, fmt, 1)
