"""One Parser shared between threads gives each thread the results of a parser of its own."""

from __future__ import annotations

from pathlib import Path

from clparse.parser import Parser
from tests.conftest import dev_tagged, racing


def test_threads_sharing_a_parser_get_the_serial_results(trained_db: Path) -> None:
    """With tag alternatives (the default) the CRF tagger's marginals were read in several calls while
    another thread tagged its own sentence: ``ValueError: The position, 15is out of range of 15`` from
    pycrfsuite, or the alternatives of another sentence's marginals."""
    sentences = [[w for w, _ in tagged] for tagged in dev_tagged(trained_db)] * 3
    expected = [Parser.from_db(trained_db, theta=3.0, beam=1).parse(s).to_dict() for s in sentences]
    shared = Parser.from_db(trained_db, theta=3.0, beam=1)
    got = racing(lambda k: [shared.parse(s).to_dict() for s in sentences])
    assert all(got[k] == expected for k in range(4))
