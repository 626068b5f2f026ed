"""The parser never imports the trainer: the database is the only hand-off between them (issue #15)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_parser_loads_no_trainer_and_no_nltk() -> None:
    code = ("import sys, clparse.parser; print(sorted(m for m in sys.modules "
            "if m.startswith(('clparse.boost', 'clparse.train', 'clparse.store.training', 'nltk'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "[]"  # nltk too: it is imported only when the stored tagger is first used
