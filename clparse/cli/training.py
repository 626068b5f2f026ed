"""`clparse prepare`, `train`, `status`: training examples in, boosted trees out."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from clparse import api
from clparse.cli.core import main, one_line
from clparse.cli.options import (
    DB_OPTION,
    SEED,
    ManyValues,
    Number,
    TREEBANK,
    Renamed,
    interrupted_status,
    step_names,
    stop_request,
    treebank_files,
)
from clparse.errors import ClparseError



def _skip_bad_refused(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        raise click.UsageError("prepare does not skip bad trees: a run stores every tree of its files (and "
                               "their digests); fix the tree the error names, or write the good trees with "
                               "`clparse treebank preprocess --skip-bad --skip-step ...` first", ctx)
    return value


@main.command("prepare", cls=ManyValues)
@DB_OPTION
@click.option("--train", "train", multiple=True, required=True, type=TREEBANK, callback=treebank_files,
              help="Training treebank files, or directories of *.ptb/*.mrg files (several after one --train, "
                   "or --train repeated).")
@click.option("--dev", "dev", multiple=True, type=TREEBANK, callback=treebank_files,
              help="Development treebank files or directories (like --train).")
@click.option("--max-words", type=click.IntRange(min=0), default=15, show_default=True,
              help="Keep sentences of at most N words, punctuation not counted; 0 keeps every sentence. 15 "
                   "is the paper's setting (its authors lacked the time for longer ones); every length means "
                   "many times the examples and training time.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random bottom-up paths.")
@click.option("--order", type=click.Choice(["random", "l2r", "r2l"]), default="random", show_default=True,
              help="Item order of the training paths (paper §3.5): one seeded random path per tree, or the "
                   "deterministic left-to-right / right-to-left order, with one correct inference per state "
                   "and only the spans the order allows as candidates (fewer examples); the parser keeps the "
                   "same order.")
@click.option("--paths", type=click.IntRange(min=1), default=1, show_default=True,
              help="Seeded random bottom-up paths per training tree (the paper's: one). Each path's states "
                   "add their candidates as examples (two paths: a third more distinct examples); measured "
                   "on GUM dev <= 15, two paths lost 0.78 F1 (docs/accuracy.md). Random order only.")
@click.option("--context", type=click.IntRange(0, 5), default=2, show_default=True,
              help="Context items on each side that features may look at.")
@click.option("--max-children", type=click.IntRange(min=1), default=5, show_default=True,
              help="K: most children an inferred item may have.")
@click.option("--min-word-count", "--vocab-min", "vocab_min", cls=Renamed, old=("--vocab-min",),
              type=click.IntRange(min=1), default=5, show_default=True,
              help="Words seen fewer times in training become UNK (1 keeps the full vocabulary).")
@click.option("--skip-step", "skip_steps", multiple=True, type=step_names(),
              help="Switch off a preprocessing step (repeatable).")
@click.option("--constraints/--no-constraints", default=True, show_default=True,
              help="Candidate constraints: no span beginning or ending with punctuation, ROOT only over a "
                   "single item (no gold tree needs either after preprocessing; fewer examples, faster "
                   "parsing).")
@click.option("--unknown-words", type=click.Choice(["unk", "signatures"]), default="unk", show_default=True,
              help="Rare words (below --min-word-count) become one UNK, or an UNK signature of their shape "
                   "and suffix (UNK-Cap, UNK-num, UNK-ly, ...).")
@click.option("--template", "templates", multiple=True, type=click.Choice(api.TEMPLATE_NAMES),
              help="Richer feature templates beside the paper's (repeatable; default: all four, which "
                   "measured +0.6 F1): child-extra (second, second-to-last, head±2 children), head-of-child "
                   "(each edge/head child's head child), context-exists (exists-tests over the context "
                   "items), length (bucketed counts of children and words). Naming some keeps only those; "
                   "`none` keeps the paper's templates alone. Opt-in only: span-edges (the span's first and "
                   "last words and the words just outside it, with their tags; measured on all of GUM dev, "
                   "-0.50 F1: docs/accuracy.md); punctuation (how many punctuation words the span and its "
                   "children hold, bucketed; -0.45 F1 measured the same way); coarse-tags (beside every test "
                   "of a tag, the same test of its coarse class, <NOUN> for NN, NNS, NNP, NNPS, and so on, "
                   "which a tagger's errors inside a class leave unchanged; from raw tokens on all of GUM "
                   "dev, -0.38 F1: docs/tagger.md).")
@click.option("--tagger", type=click.Choice(["crf", "perceptron"]), default="crf", show_default=True,
              help="The run's POS tagger, for raw text: a CRF (CRFsuite; 96.6 % on GUM dev) or NLTK's "
                   "averaged perceptron (95.0 %). Stored in the database as data.")
@click.option("--train-tags", type=click.Choice(["gold", "jackknife", "both"]), default="gold",
              show_default=True,
              help="Tags on the training trees' leaves: the treebank's gold tags, jackknifed tagger tags "
                   "(each fold tagged by a tagger trained on the other folds), so the parser learns from the "
                   "tag errors it will meet on raw text, or both: every sentence with its gold tags, and "
                   "once more with its jackknifed tags where they differ.")
@click.option("--folds", type=click.IntRange(min=2), default=10, show_default=True,
              help="Jackknife folds (with --train-tags jackknife or both).")
@click.option("--fold-order", type=click.Choice(["interleaved", "contiguous"]), default="interleaved",
              show_default=True,
              help="How training sentences are dealt into jackknife folds: sentence i to fold i mod N, so "
                   "each fold's tagger sees every genre (as the final tagger does), or N contiguous blocks.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes training the jackknife folds' taggers at once.")
@click.option("--tagger-iterations", type=click.IntRange(min=1), default=None,
              help="Training iterations of the tagger(s) (default: CRF 150, perceptron 5).")
@click.option("--skip-bad", is_flag=True, hidden=True, expose_value=False, callback=_skip_bad_refused)
def prepare_command(db: Path, train: tuple[Path, ...], dev: tuple[Path, ...], **settings: Any) -> None:
    """Read and preprocess the treebank and store every training example with its features.

    One seeded random bottom-up path per training tree (--paths N: N of them); every candidate at
    every state on it becomes an example of its label (paper §2.1.1). Running it again with the
    same inputs does nothing; with other inputs or settings it refuses (use a new --db). A malformed
    tree stops it (no --skip-bad: a run holds whole files); a database this command created is then
    removed.

    \b
    clparse prepare --db db/gum.sqlite --train gum/train/*.ptb --dev gum/dev/*.ptb
    clparse prepare --db db/gum.sqlite --train gum/train --dev gum/dev
    """
    from clparse.progress import Progress, Ticker

    if settings["train_tags"] == "gold":  # these shape only the jackknife: unused, said so
        ctx = click.get_current_context()
        given = [f"--{name.replace('_', '-')}" for name in ("folds", "fold_order", "jobs")
                 if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"{' and '.join(given)} apply only with --train-tags jackknife or both "
                                   "(the jackknife's folds and taggers); leave them out or add it", ctx)
    bars: dict[str, Progress] = {}

    def phase(name: str, bar: Progress) -> None:
        """A new phase: the bars of the earlier ones are done."""
        for earlier in bars.values():
            earlier.close()
        bars.clear()
        bars[name] = bar

    def fold_done(_fold: int) -> None:
        if "folds" not in bars:
            phase("folds", Progress("jackknife taggers", settings["folds"], "folds"))
        bars["folds"].update(1)

    def start(total: int) -> None:
        phase("examples", Progress("generating examples", total, "sentences"))

    def jackknife_starts() -> None:
        """Said once the folds, settings and inputs passed their checks (it was said before a refusal)."""
        for bar in bars.values():
            bar.close()
        bars.clear()
        click.echo(f"training {settings['folds']} {settings['tagger']} taggers for the jackknifed training "
                   f"tags, {settings['jobs']} at a time", err=True)

    def tagger_starts() -> None:
        crf = settings["tagger"] == "crf"
        iterations = settings["tagger_iterations"] or (150 if crf else 5)
        # The CRF reports each iteration (a bar with an ETA; L-BFGS may converge before the last); the
        # perceptron reports nothing, so its time shows.
        bar = Progress("training the POS tagger", iterations, "iterations") if crf else \
            Ticker("training the POS tagger")
        phase("tagger", bar)  # the examples' bar ends before the line below
        click.echo(f"training the run's {settings['tagger']} POS tagger (up to {iterations} iterations over "
                   "every training sentence; a minute or two on GUM)", err=True)
        if isinstance(bar, Ticker):
            bar.begin()

    def tagger_iteration(number: int) -> None:
        bar = bars.get("tagger")
        if isinstance(bar, Progress) and not isinstance(bar, Ticker):
            bar.update(number - bar.done)

    progress = api.PrepareProgress(start,
                                   lambda n: bars["examples"].update(n) if "examples" in bars else None,
                                   fold_done, tagger_starts, tagger_iteration, jackknife_starts)
    phase("reading", Ticker("reading and preprocessing the treebank").begin())  # until the total is known
    try:
        summary = api.prepare(db, train, dev, progress=progress, echo=click.echo,
                              warn=lambda message: click.echo(message, err=True), **settings)
    finally:
        for bar in bars.values():
            bar.close()
    click.echo(summary.message)
    for warning in summary.warnings:
        click.echo(warning, err=True)
    if summary.created:
        click.echo(f"{'label':<10}{'candidates':>12}{'positive':>10}{'distinct':>10}")
        for label, row in summary.labels.items():
            click.echo(f"{label:<10}{row['candidates']:>12,}{row['positives']:>10,}{row['examples']:>10,}")


def _dask_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--dask: checked before anything slow starts (Dask itself is imported only if given)."""
    if value is None:
        return None
    from clparse.dask_address import check_address

    try:
        return check_address(value)
    except ClparseError as exc:
        raise click.BadParameter(str(exc).removeprefix(f"dask: {value!r}: "), ctx, param) from None


@main.command("train")
@DB_OPTION
@click.option("--labels", default=None, metavar="NP,VP,...", help="Labels to train (default: all).")
@click.option("--until-theta", type=Number(above=0), default=None, metavar="X",
              help="Stop a label once its Θ falls below X. Default (no stop option given): "
                   "1e-6 × the mean number of candidates per label.")
@click.option("--max-iterations", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop a label at N trees in all.")
@click.option("--max-splits", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop a label once its trees hold N splits in all.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Labels trained at once, each in its own process.")
@click.option("--dask", "dask", default=None, metavar="tcp://HOST:PORT | local:N", callback=_dask_address,
              help="Compute the labels on a Dask cluster (a scheduler's address, or local:N worker processes "
                   "here); this process alone writes the database. Needs pip install 'clparse[dask]'. See "
                   "docs/scale-out.md.")
@click.option("--dask-batch", type=click.IntRange(min=1), default=50, show_default=True, metavar="N",
              help="With --dask: a worker sends back at most N iterations (and about a second of work) at a "
                   "time.")
@click.option("--stumps", is_flag=True,
              help="Decision stumps (trees of depth 1, paper §3.4). Default: the depth the run's labels were "
                   "started with, else no cap.")
@click.option("--max-depth", type=click.IntRange(min=1), default=None,
              help="Cap the depth of every tree. Default: what each label was started with, else no "
                   "cap.")
@click.option("--loss", type=click.Choice(["logistic", "exponential"]), default=None,
              help="Logistic loss (the paper) or exponential loss (AdaBoost, footnote 2). Default: what the "
                   "run's labels were started with, else logistic.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=None,
              help="Keep the margin vector every N iterations (weights of other iterations are rebuilt "
                   "from the trees when queried). Default: what each label was started with, else 50.")
@click.option("--smoothing", type=Number(at_least=0), default=None,
              help="Leaf smoothing: ε = 1e-8 + S × the mean weight of a candidate example, so a leaf holding "
                   "a few examples gets a modest confidence (0.5 is Schapire & Singer's ε = 1/2N; 0: the "
                   "paper's). Default: what each label was started with, else 0.5 (it measured +0.74 "
                   "F1).")
@click.option("--rule", "rule", type=click.Choice(["mrl", "l1"]), default=None,
              help="How trees grow: mrl, the paper's (ΔZ splits under Θ, κ = ½ ln W+/W−), or l1, the "
                   "authors' 2006 release (splits and confidences pay an ℓ1 penalty λ, which takes Θ's "
                   "place). Default: what each label was started with, else mrl.")
@click.option("--sample", type=click.IntRange(min=2), default=None,
              help="Grow each tree on a priority sample of at most N distinct examples (weights kept "
                   "unbiased; leaf confidences still from every example), as the authors' release did with "
                   "100000: faster iterations on large runs, seeded, so resuming stays bit-identical. "
                   "Default: what each label was started with, else every example (exact).")
@click.option("--sample-seed", type=SEED, default=None,
              help="Seed of the per-tree samples (default: the started run's, else 0).")
def train_command(db: Path, labels: str | None, until_theta: float | None, max_iterations: int | None,
                  max_splits: int | None, jobs: int, dask: str | None, dask_batch: int,
                  **options: Any) -> None:
    """Boost each label's decision trees (paper §2.1.2-2.1.3), resumably.

    Every iteration (tree, Θ, loss, weights checkpoint) is committed in one transaction: Ctrl-C or
    SIGTERM stops after the current iteration, a kill loses at most the iteration in flight, and
    running the same command again resumes every label where it stopped, with trees identical to
    an uninterrupted run. Settings (--loss, --stumps, --max-depth, --checkpoint-every, --smoothing,
    --rule, --sample) are fixed per label at its first iteration; left out, each started label keeps what
    it was started with (so the plain command resumes any run) and a label not started yet takes what the
    started labels share, else the default. Watch a run with `clparse status`.

    Exit status: 0 when every label ended (stopped or converged); 1 on an error or a failed or refused
    label; a run paused cleanly by a signal says "paused; run the same command again to resume" and
    exits 130 after Ctrl-C (SIGINT) and 143 after SIGTERM (128 + the signal's number).
    """
    if dask is None and click.get_current_context().get_parameter_source("dask_batch") \
            is ParameterSource.COMMANDLINE:
        raise click.UsageError("--dask-batch sizes what a Dask worker sends back: give --dask too")
    chosen = [x.strip() for x in labels.split(",")] if labels is not None else None
    view = _TrainingView(db)
    flag = stop_request("iteration", "clparse train")
    summary = api.train(db, chosen, until_theta=until_theta, max_iterations=max_iterations,
                        max_splits=max_splits, jobs=jobs, dask=dask, dask_batch=dask_batch,
                        options=api.TrainOptions(**options),
                        should_stop=flag, on_start=view.start, on_iteration=view.iteration, on_poll=view.poll)
    if view.finish(summary, signalled=flag.signum is not None):
        sys.exit(interrupted_status(flag.signum))


class _TrainingView:
    """What `train` shows: the plan, a progress line on a terminal (labels finished to the stop rule, labels
    in flight), and the per-label table with warnings at the end (logs get the plan and the summary only)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.labels: list[str] = []
        self.rule: Any = None
        self.bar: Any = None

    def start(self, plan: api.TrainPlan) -> None:
        from clparse.progress import TrainingProgress

        click.echo(f"training {len(plan.labels)} label(s) {plan.stop}, {plan.where}; Ctrl-C pauses", err=True)
        self.labels, self.rule = plan.labels, plan.rule
        self.bar = TrainingProgress(len(plan.labels), count=self.finished)

    def finished(self) -> int:
        """Labels finished to this run's stop rule (a paused one is not, nor one stopped at a looser rule)."""
        return len(api.finished_labels(self.db, self.labels, self.rule))

    def iteration(self, label: str, result: Any) -> None:
        if self.bar is not None and self.bar.enabled:
            self.bar.iteration(label, result.iteration, result.theta)

    def poll(self) -> None:
        if self.bar is None or not self.bar.enabled:
            return
        from clparse.train.status import finished

        rows = api.status(self.db, self.labels)
        self.bar.poll(sum(finished(r, self.rule) for r in rows),
                      {r.label: (r.iteration, r.theta) for r in rows if r.state == "training"})

    def finish(self, summary: Any, signalled: bool = False) -> bool:
        """The table and warnings; exits 1 on a failed or refused label. Returns whether the run paused
        (a label paused, or a signal came before every label was started)."""
        from clparse.train import format_status

        if self.bar is not None:
            self.bar.finish()
        rows = api.status(self.db, self.labels)
        click.echo(format_status(rows))
        if summary.cluster is not None:
            click.echo(summary.cluster.describe(), err=True)
        for label, error in summary.refused.items():
            click.echo(f"warning: label {label} left alone: {one_line(error)}", err=True)
        for label, error in summary.failures.items():
            click.echo(f"warning: label {label} failed: {one_line(error)}", err=True)
        paused = summary.interrupted or (signalled and len(summary.states) < len(self.labels))
        if paused:
            from clparse.train.status import finished

            done = sum(finished(r, self.rule) for r in rows)
            click.echo(f"paused; run the same command again to resume ({done} of {len(rows)} label(s) "
                       "finished)", err=True)
        if summary.failures or summary.refused:
            sys.exit(1)
        return paused


@main.command("status")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status_command(db: Path, as_json: bool) -> None:
    """Per label: iteration, Θ, splits, loss, examples/s, state, last update (works during training).

    After the table is read, the file gets SQLite's quick check (read-only): a damaged file is an error
    (exit status 1), not a table read from its few healthy pages."""
    from dataclasses import asdict

    from clparse.train import format_status

    rows = api.status(db, check=True)
    click.echo(json.dumps([asdict(r) for r in rows], indent=2) if as_json else format_status(rows))
