"""Faults a reviewer found in `clparse quickstart` as a user, one test each (each failed before its fix)."""

from __future__ import annotations

from pathlib import Path

from clparse.quickstart import toy_model_note
from tests.conftest import read_rows


def test_the_toy_model_note_counts_the_sentences_trained_on(trained_db: Path) -> None:
    # "trained on the sample's 146 training sentences" counted the 4 that prepare stored but did not train on
    (stored, trained), = read_rows(trained_db,
                                   "SELECT count(*), sum(trained) FROM sentences WHERE split = 'train'")
    assert trained < stored
    assert f"trained on the sample's {trained} training sentences" in toy_model_note(trained_db, [], None)
