"""A CRF tagger shared between threads, called directly (not through a Parser): each thread gets what
the tagger alone gives. Its marginals and alternatives read the sentence CRFsuite last tagged, in
several calls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clparse.tag.crf import CrfTagger
from clparse.tag.stored import load_tagger
from tests.conftest import dev_tagged, racing


@pytest.mark.parametrize("call", ["alternatives", "marginals", "tag"])
def test_threads_sharing_a_crf_tagger_get_the_serial_results(trained_db: Path, call: str) -> None:
    tagger = load_tagger(trained_db)
    assert isinstance(tagger, CrfTagger)
    calls: dict[str, Callable[[list[str]], Any]] = {
        "alternatives": lambda words: tagger.alternatives(words, 3, threshold=0.99),
        "marginals": tagger.marginals, "tag": tagger.tag}
    sentences = [[w for w, _ in tagged] for tagged in dev_tagged(trained_db)]
    expected = [calls[call](words) for words in sentences]
    # each thread in another order, so that long and short sentences meet
    got = racing(lambda k: [calls[call](words) for words in sentences[k:] + sentences[:k]])
    assert all(got[k] == expected[k:] + expected[:k] for k in range(4))
