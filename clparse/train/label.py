"""Train one label: resume its committed state, iterate, commit every iteration, stop cleanly.

The margin vector is stored only at checkpoints and when the label stops, pauses or converges; a
resume adds the trees committed since the stored margins to them (``weights.current_margins``),
so it continues bit-identically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.errors import ClparseError, DatabaseError
from clparse.store.training import StoredState, TrainingStore
from clparse.train.process import claim_note, pid_alive, trainer_alive
from clparse.train.remote import examples_per_second, iteration_rows
from clparse.train.settings import refuse_changes
from clparse.train.stopping import StopRule
from clparse.train.weights import current_margins

__all__ = ["checked_state", "damage_error", "iteration_rows", "pid_alive", "train_label", "trainer_alive"]


def checked_state(store: TrainingStore, label: str, settings: BoostSettings) -> StoredState:
    """The label's stored state, refused if its training began with other settings."""
    state = store.state(label)
    if state.settings is not None:
        refuse_changes(label, BoostSettings.from_dict(state.settings).to_dict(), settings.to_dict())
    return state


def train_label(db: str | Path, label: str, settings: BoostSettings, rule: StopRule,
                should_stop: Callable[[], bool] = lambda: False,
                on_iteration: Callable[[str, IterationResult], object] | None = None) -> str:
    """Boost ``label`` until ``rule`` says stop, it converges, or ``should_stop()`` turns true.

    ``should_stop`` is checked between iterations only: an iteration in flight always finishes and
    commits. Returns the final state (``stopped``, ``converged``, ``paused``). Any error after the
    label is claimed marks it ``failed`` (with the message) before it propagates, except damage: a
    file found damaged is not written into again (:func:`damage_error`), and the error says so in one line.

    The stop rule is checked on the state read under the claim, before the first new iteration: a label
    another trainer finished between the first look and the claim is not given one tree too many. A label
    stopped at its start gets its margins stored like any other stop, unless they are stored already.
    """
    store = TrainingStore(db)
    state = checked_state(store, label, settings)  # refuses changed settings before the (slow) load
    if state.state == "converged":
        return "converged"
    reason = rule.reached(state.iteration, state.theta, store.splits(label))
    # Settled without a claim only if nothing is missing and no other trainer holds the label (a live one
    # is left alone by the claim below, a dead one's claim is taken over there).
    settled = state.state is None or (state.state != "training"
                                      and state.margins_iteration == state.iteration)
    if reason is not None and settled:
        if state.state is not None:
            store.finish(label, "stopped", reason)
        return "stopped"
    # atomic: a second trainer is refused here (its checksum pass reads one snapshot: a tree the live holder
    # commits meanwhile is not taken for damage)
    store.claim(label, settings.to_dict(), trainer_alive, claim_note())
    try:
        state = checked_state(store, label, settings)  # under the claim: nobody else commits from here on
        reason = rule.reached(state.iteration, state.theta, store.splits(label))
        if reason is not None and state.margins_iteration == state.iteration:
            store.finish(label, "stopped", reason)
            return "stopped"
        problem = store.load_problem(label)
        margins = current_margins(store, label, state, problem)  # replays the trees after the stored margins
        booster = Booster(problem.indptr, problem.indices, problem.n_features, problem.y,
                          problem.multiplicity, settings, margins=margins, iteration=state.iteration,
                          theta=state.theta)
        del problem, margins
        stored = state.margins_iteration  # the iteration whose margins label_training holds

        def finish(final: str, message: str) -> str:
            """End with the booster's margins stored (it is at the last committed iteration here)."""
            if stored == booster.iteration:  # a checkpoint wrote them already
                store.finish(label, final, message)
            else:
                store.finish(label, final, message, margins=booster.margins,
                             margins_iteration=booster.iteration)
            return final

        if reason is not None:  # stopped at its start: only the margins were missing
            return finish("stopped", reason)
        store.record_loss(label, booster.loss())
        splits = store.splits(label)
        while True:
            if should_stop():
                return finish("paused", f"interrupted after iteration {booster.iteration}; "
                                        "run `clparse train` again to resume")
            result = booster.step()
            if result is None:  # nothing was added: the margins are the last committed iteration's
                return finish("converged", "no split reduces the loss any more")
            iteration, nodes = iteration_rows(result)
            rate = examples_per_second(len(booster.y), result)
            checkpoint = result.iteration % settings.checkpoint_every == 0
            store.commit(label, iteration, nodes, booster.margins, checkpoint=checkpoint,
                         examples_per_second=rate)
            if checkpoint:
                stored = result.iteration
            splits += result.tree.splits
            if on_iteration is not None:
                on_iteration(label, result)
            reason = rule.reached(booster.iteration, booster.theta, splits)
            if reason is not None:
                return finish("stopped", reason)
    except (KeyboardInterrupt, SystemExit):
        # No margins here: the interrupt may have come inside booster.step() (margins already moved on,
        # iteration not yet) or inside commit (rolled back), so booster.margins need not be the last
        # committed iteration's. The resume replays the trees after the stored margins instead.
        store.finish(label, "paused", "interrupted; run `clparse train` again to resume")
        raise
    except BaseException as exc:
        from clparse.store.database import describe

        damage = damage_error(exc, db)
        if damage is exc:  # never write into a damaged file (the write could spread the damage)
            raise
        if damage is not None:
            raise damage from exc
        try:
            store.finish(label, "failed", describe(exc, db))
        except Exception:  # e.g. the disk is still full: the claim then reads as dead, and resumes
            pass
        raise


def damage_error(exc: BaseException, db: str | Path) -> DatabaseError | None:
    """One line for ``exc`` if it means the file is damaged, None otherwise.

    Damage is what SQLite reports as such, what the store found damaged (its message says ``DAMAGED``),
    text that is not UTF-8 read from the database, and any other unexpected error (a ``ValueError`` from
    arrays that do not fit together, say) met in a file that SQLite's quick check now finds damaged.
    Errors clparse raises on purpose are not damage unless they say so.
    """
    from clparse.store.database import DAMAGED, is_damage, quick_check, sqlite_error

    if isinstance(exc, DatabaseError) and DAMAGED in str(exc):
        return exc
    if is_damage(exc):
        return sqlite_error(exc, db)
    if isinstance(exc, UnicodeDecodeError):
        return DatabaseError(f"{db}: {DAMAGED} (text that is not UTF-8: {exc.reason})")
    if isinstance(exc, ClparseError | KeyboardInterrupt | SystemExit | MemoryError):
        return None
    try:
        quick_check(db)
    except DatabaseError as found:
        return found if DAMAGED in str(found) else None
    except Exception:
        return None
    return None
