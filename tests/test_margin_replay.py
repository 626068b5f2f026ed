"""Margins are stored only at checkpoints and at the end; resume and weight replay rebuild the rest exactly.

Issue 13: a committed iteration no longer rewrites the label's whole margin vector. It is written
every ``checkpoint_every`` iterations and when a label stops, pauses or converges
(``label_training.margins_iteration`` says after which iteration); resuming adds the trees committed
since then with ``Forest.accumulate``, the additions the booster made. Everything here trains NP of
the session's sample database afresh with a checkpoint every 7 iterations, for 20 iterations, and
holds the result to an uninterrupted run byte for byte.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.store.training import TrainingStore
from clparse.train import StopRule, train_label
from clparse.train.weights import margins_after
from tests.conftest import backup_database, read_rows
from tests.test_train import Runs, progress, watch

LABEL = "NP"
EVERY = 7
LAST = 20
SETTINGS = BoostSettings(checkpoint_every=EVERY)
CLPARSE = Path(sys.executable).with_name("clparse")
TIMING = ("seconds", "search_seconds", "finished_at")


def label_id(db: Path) -> int:
    return int(read_rows(db, "SELECT id FROM labels WHERE name = ?", LABEL)[0][0])


def stored(db: Path) -> tuple[int, int, bytes, str]:
    """(iteration, margins_iteration, margins blob, state) of NP's label_training row."""
    [(iteration, at, blob, state)] = read_rows(
        db,
        "SELECT iteration, margins_iteration, margins_float64, state FROM label_training WHERE label_id = ?",
        label_id(db))
    return int(iteration), int(at), bytes(blob), str(state)


def dump(db: Path) -> dict[str, Any]:
    """NP's training results, timings aside, in an exactly comparable form."""
    lid = label_id(db)
    columns = [name for (_, name, *_) in read_rows(db, "PRAGMA table_info(iterations)")
               if name not in (*TIMING, "label_id")]
    return {
        "state": read_rows(db, "SELECT settings_json, state, iteration, theta, loss, splits, "
                               "margins_iteration, margins_float64 FROM label_training WHERE label_id = ?",
                           lid),
        "iterations": read_rows(db, f"SELECT {', '.join(columns)} FROM iterations WHERE label_id = ? "
                                    "ORDER BY iteration", lid),
        "nodes": read_rows(db, "SELECT * FROM tree_nodes WHERE label_id = ? ORDER BY iteration, node", lid),
        "checkpoints": read_rows(db, "SELECT iteration, margins_float64 FROM margin_checkpoints "
                                     "WHERE label_id = ? ORDER BY iteration", lid),
    }


@pytest.fixture(scope="module")
def fresh_db(copy_trained_db: Callable[[], Path]) -> Path:
    """A copy of the session's trained database in which NP was never trained."""
    db = copy_trained_db()
    lid = label_id(db)
    writer = apsw.Connection(str(db))
    try:
        for table in ("margin_checkpoints", "tree_nodes", "iterations", "label_training"):
            writer.execute(f"DELETE FROM {table} WHERE label_id = ?", (lid,))
    finally:
        writer.close()
    return db


@pytest.fixture
def fresh(fresh_db: Path, tmp_path: Path) -> Path:
    return backup_database(fresh_db, tmp_path / "fresh.sqlite")


@dataclass
class Reference:
    db: Path
    result: dict[str, Any]
    margins: dict[int, bytes]  # t -> the booster's margins in memory after t trees
    after_commit: dict[int, tuple[int, int, bytes, str]]  # t -> NP's stored row right after committing t


@pytest.fixture(scope="module")
def reference(fresh_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    """An uninterrupted run of 20 iterations, recording the booster's margins and the stored row as it
    went."""
    db = backup_database(fresh_db, tmp_path_factory.mktemp("reference") / "reference.sqlite")
    margins: dict[int, bytes] = {}

    class Recording(Booster):
        def step(self) -> IterationResult | None:
            if self.iteration == 0:
                margins[0] = self.margins.tobytes()
            result = super().step()
            if result is not None:
                margins[result.iteration] = self.margins.tobytes()
            return result

    after_commit: dict[int, tuple[int, int, bytes, str]] = {}

    def probe(label: str, result: IterationResult) -> None:
        after_commit[result.iteration] = stored(db)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("clparse.train.label.Booster", Recording)
        assert train_label(db, LABEL, SETTINGS, StopRule(max_iterations=LAST),
                           on_iteration=probe) == "stopped"
    assert sorted(margins) == list(range(LAST + 1)) and sorted(after_commit) == list(range(1, LAST + 1))
    yield Reference(db, dump(db), margins, after_commit)


def test_margins_are_written_at_checkpoints_and_at_the_end(reference: Reference) -> None:
    """(b) A commit between checkpoints leaves the stored margins alone; the finished label stores its
    last."""
    previous = reference.margins[0]
    for t in range(1, LAST + 1):
        iteration, at, blob, state = reference.after_commit[t]
        assert (iteration, state) == (t, "training")
        assert at == EVERY * (t // EVERY), t  # the last checkpoint (0: the claim's zeros)
        assert blob == reference.margins[at], t
        if t % EVERY:
            assert blob == previous, t  # the write really was skipped
        previous = blob
    assert [(t, bytes(b)) for t, b in reference.result["checkpoints"]] == \
        [(t, reference.margins[t]) for t in range(EVERY, LAST + 1, EVERY)]
    assert stored(reference.db) == (LAST, LAST, reference.margins[LAST], "stopped")


def test_margins_after_every_iteration_are_the_booster_s(reference: Reference) -> None:
    """(c) margins_after(t) is byte for byte what the booster held after t trees."""
    store = TrainingStore(reference.db, readonly=True)
    try:
        problem = store.load_problem(LABEL)
        for t in range(LAST + 1):
            assert margins_after(store, LABEL, t, problem).tobytes() == reference.margins[t], t
    finally:
        store.close()


def crash_after(k: int) -> Callable[[str, IterationResult], None]:
    """An on_iteration that dies right after iteration k committed (the store then is as a kill -9
    leaves it)."""

    def hook(label: str, result: IterationResult) -> None:
        if result.iteration == k:
            raise RuntimeError(f"crash after {k}")

    return hook


def test_crashed_label_replays_from_its_checkpoint(reference: Reference, fresh: Path) -> None:
    """A label that died between checkpoints: its stored margins lag, and every reader replays them."""
    with pytest.raises(RuntimeError, match="crash after 17"):
        train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=LAST), on_iteration=crash_after(17))
    assert stored(fresh) == (17, 14, reference.margins[14], "failed")
    store = TrainingStore(fresh, readonly=True)
    try:
        problem = store.load_problem(LABEL)
        for t in range(18):
            assert margins_after(store, LABEL, t, problem).tobytes() == reference.margins[t], t
    finally:
        store.close()
    assert train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=LAST)) == "stopped"
    assert dump(fresh) == reference.result


def test_stop_pause_crash_and_resume_is_bit_identical(reference: Reference, fresh: Path) -> None:
    """(a) Stopped, paused and crashed at iterations before, at and between checkpoints, then resumed:
    the trees, checkpoints and final margins are those of the uninterrupted run."""
    # Stopped at 3 (margins stored at the end), crashed at 5 (replays 3 trees onto the margins stored at
    # 3), paused at 7 (a checkpoint: nothing more to store), crashed at 9 and 13 (replays from 7),
    # stopped at 10, paused at 15 after crashing at 14 (on a checkpoint) and 16.
    plan: list[tuple[str, int]] = [("stop", 3), ("crash", 5), ("pause", 7), ("crash", 9), ("stop", 10),
                                   ("crash", 13), ("crash", 14), ("crash", 16), ("pause", 18)]
    for how, k in plan:
        if how == "stop":
            assert train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=k)) == "stopped"
            assert stored(fresh) == (k, k, reference.margins[k], "stopped")
        elif how == "pause":
            assert train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=LAST),
                               should_stop=lambda k=k: stored(fresh)[0] >= k) == "paused"
            assert stored(fresh) == (k, k, reference.margins[k], "paused")
        else:
            with pytest.raises(RuntimeError):
                train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=LAST),
                            on_iteration=crash_after(k))
            iteration, at, blob, state = stored(fresh)
            assert (iteration, state) == (k, "failed")
            assert blob == reference.margins[at] and at <= k and k - at < EVERY, (k, at)
    assert train_label(fresh, LABEL, SETTINGS, StopRule(max_iterations=LAST)) == "stopped"
    assert dump(fresh) == reference.result


@pytest.mark.slow
def test_sigkill_and_resume_is_bit_identical(reference: Reference, fresh: Path, tmp_path: Path) -> None:
    """(a) A real `clparse train` killed with SIGKILL after a few commits, then resumed to the end."""
    runs = Runs(tmp_path)
    args = ("train", "--db", str(fresh), "--labels", LABEL, "--max-iterations", str(LAST),
            "--checkpoint-every", str(EVERY))
    try:
        for target in (4, 9, 16):  # kills land after a commit, somewhere in the next iteration or its commit
            process = runs.start(*args)
            at = watch(process, fresh, lambda p, _, target=target: p.iterations.get(LABEL, 0) >= target)
            assert at is not None, runs.output(process)[1][-2000:]
            process.send_signal(signal.SIGKILL)
            assert runs.finish(process, timeout=60)[0] == -signal.SIGKILL
            iteration, at_margins, blob, _ = stored(fresh)
            assert target <= iteration < LAST and blob == reference.margins[at_margins]
            assert iteration - at_margins < EVERY
        code, _, err = runs.run(*args)
        assert code == 0, err
    finally:
        runs.cleanup()
    assert progress(fresh).states[LABEL] == "stopped"
    assert dump(fresh) == reference.result  # the CLI's settings included
