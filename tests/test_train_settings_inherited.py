"""A run started with --stumps, --loss, --max-depth or --checkpoint-every resumes with a plain `train`:
options left out take what the run's labels were started with (they had to be typed again, or the label
was refused)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import invoke_cli, read_rows


def settings_of(db: Path, label: str) -> dict[str, object]:
    rows = read_rows(db, "SELECT DISTINCT settings_json FROM label_training JOIN labels "
                         "ON labels.id = label_id WHERE name = ?", label)
    assert len(rows) == 1
    return dict(json.loads(rows[0][0]))


def iterations(db: Path, label: str) -> int:
    return int(read_rows(db, "SELECT count(*) FROM iterations JOIN labels ON labels.id = label_id "
                             "WHERE name = ?", label)[0][0])


def test_a_plain_train_resumes_and_starts_labels_with_the_run_settings(prepared: Path) -> None:
    started = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "2", "--stumps",
                          "--loss", "exponential", "--checkpoint-every", "7"])
    assert started.exit_code == 0, started.stderr
    first = settings_of(prepared, "NP")
    assert (first["max_depth"], first["loss"], first["checkpoint_every"]) == (1, "exponential", 7)
    resumed = invoke_cli(["train", "--db", prepared, "--labels", "NP,VP", "--max-iterations", "3"])
    assert resumed.exit_code == 0, resumed.stderr
    assert iterations(prepared, "NP") == 3 and iterations(prepared, "VP") == 3
    assert settings_of(prepared, "NP") == first and settings_of(prepared, "VP") == first
    # Asked for explicitly, another setting is still refused by the stored one (never silently mixed).
    changed = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "4",
                          "--checkpoint-every", "50"])
    assert changed.exit_code == 1 and "was started with --checkpoint-every 7 (not 50)" in changed.stderr
    assert iterations(prepared, "NP") == 3


def test_a_fresh_run_takes_the_defaults(prepared: Path) -> None:
    done = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "1"])
    assert done.exit_code == 0, done.stderr
    got = settings_of(prepared, "NP")
    assert (got["max_depth"], got["loss"], got["checkpoint_every"]) == (None, "logistic", 50)
