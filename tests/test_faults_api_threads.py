"""One Parser shared between threads gives each thread the results of a parser of its own."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from clparse.parser import Parser
from tests.conftest import dev_tagged


def test_threads_sharing_a_parser_get_the_serial_results(trained_db: Path) -> None:
    """With tag alternatives (the default) the CRF tagger's marginals were read in several calls while
    another thread tagged its own sentence: ``ValueError: The position, 15is out of range of 15`` from
    pycrfsuite, or the alternatives of another sentence's marginals."""
    sentences = [[w for w, _ in tagged] for tagged in dev_tagged(trained_db)] * 3
    expected = [Parser.from_db(trained_db, theta=3.0, beam=1).parse(s).to_dict() for s in sentences]
    shared = Parser.from_db(trained_db, theta=3.0, beam=1)
    got: dict[int, list[dict[str, object]]] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            got[k] = [shared.parse(s).to_dict() for s in sentences]
        except BaseException as exc:  # told below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: the race showed in one run of three at the default
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert all(got[k] == expected for k in range(4))
