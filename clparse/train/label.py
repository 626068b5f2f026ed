"""Train one label: resume its committed state, iterate, commit every iteration, stop cleanly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.store.training import TrainingStore
from clparse.train.process import claim_note, pid_alive, trainer_alive
from clparse.train.stopping import StopRule

__all__ = ["pid_alive", "train_label", "trainer_alive"]


def train_label(db: str | Path, label: str, settings: BoostSettings, rule: StopRule,
                should_stop: Callable[[], bool] = lambda: False,
                on_iteration: Callable[[str, IterationResult], object] | None = None) -> str:
    """Boost ``label`` until ``rule`` says stop, it converges, or ``should_stop()`` turns true.

    ``should_stop`` is checked between iterations only: an iteration in flight always finishes and
    commits. Returns the final state (``stopped``, ``converged``, ``paused``). Any error after the
    label is claimed marks it ``failed`` (with the message) before it propagates.
    """
    store = TrainingStore(db)
    state = store.state(label, settings)  # refuses changed settings before the (slow) load
    if state.state == "converged":
        return "converged"
    reason = rule.reached(state.iteration, state.theta, store.splits(label))
    if reason is not None:
        if state.state is not None:
            store.finish(label, "stopped", reason)
        return "stopped"
    store.claim(label, settings, trainer_alive, claim_note())  # atomic: a second trainer is refused here
    try:
        problem = store.load_problem(label)
        state = store.state(label, settings)
        booster = Booster(problem.indptr, problem.indices, problem.n_features, problem.y, problem.multiplicity,
                          settings, margins=state.margins, iteration=state.iteration, theta=state.theta)
        del problem
        store.record_loss(label, booster.loss())
        splits = store.splits(label)
        while True:
            if should_stop():
                store.finish(label, "paused", f"interrupted after iteration {booster.iteration}; "
                                              "run `clparse train` again to resume")
                return "paused"
            result = booster.step()
            if result is None:
                store.finish(label, "converged", "no split reduces the loss any more")
                return "converged"
            store.commit(label, result, booster.margins, settings, len(booster.y))
            splits += result.tree.splits
            if on_iteration is not None:
                on_iteration(label, result)
            reason = rule.reached(booster.iteration, booster.theta, splits)
            if reason is not None:
                store.finish(label, "stopped", reason)
                return "stopped"
    except (KeyboardInterrupt, SystemExit):
        store.finish(label, "paused", "interrupted; run `clparse train` again to resume")
        raise
    except BaseException as exc:
        from clparse.store.database import describe, is_damage

        if not is_damage(exc):  # never write into a damaged file (the write could spread the damage)
            try:
                store.finish(label, "failed", describe(exc, db))
            except Exception:  # e.g. the disk is still full: the claim then reads as dead, and resumes
                pass
        raise
