"""`clparse calibrate` and `clparse report`: Θ̂ chosen on the dev set, and what was measured."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from clparse import api
from clparse.cli.core import LIMIT, main, one_line, verbose
from clparse.cli.options import (
    AGGREGATOR,
    AGGREGATOR_CHOICES,
    CALIBRATION_BEAM,
    DB_OPTION,
    PARSE_BEAM,
    SEARCH_LIMIT,
    TREEBANK,
    ManyValues,
    Renamed,
    Theta,
    interrupted_status,
    search_options,
    stop_request,
    treebank_files,
)
from clparse.errors import ConfigurationError


def _thetas(ctx: click.Context, param: click.Parameter, value: str | None) -> list[float] | None:
    if value is None:
        return None
    try:
        thetas = [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers", ctx, param) from None
    if not thetas or not all(0 < t < float("inf") for t in thetas):  # Θ̂ = 0 has no model (it must be > 0)
        raise click.BadParameter(f"{value!r}: give finite numbers > 0", ctx, param)
    # as the calibration takes them, largest first and each once: "--thetas 5,5" was announced as
    # "calibrating at 2 Θ̂ value(s): 5, 5" (and counted twice in the progress total) and parsed once
    return sorted(set(thetas), reverse=True)


@main.command("calibrate", cls=ManyValues)
@DB_OPTION
@click.option("--dev", "dev", multiple=True, type=TREEBANK, callback=treebank_files,
              help="Dev treebank files or directories (several after one --dev; default: the dev split "
                   "stored by prepare).")
@click.option("--thetas", default=None, metavar="X,Y,...", callback=_thetas,
              help="Θ̂ values to try (default: up to --points stored Θ values at which every label is "
                   "trained).")
@click.option("--points", type=click.IntRange(min=1), default=12, show_default=True,
              help="Size of the default grid.")
@search_options(CALIBRATION_BEAM)
@click.option("--tags", type=click.Choice(["gold", "tagger"]), default=None,
              help="Parse the dev set with its gold tags or with the stored tagger's. Default: the tagger's "
                   "if the run was prepared with --train-tags jackknife (then --theta best is calibrated on "
                   "what raw text looks like), else gold. Tagger-tag parses are scored with the gold tags "
                   "put back on their leaves, so every dev sentence counts.")
@click.option("--per-label", is_flag=True,
              help="After the global calibration with these settings: coordinate ascent over each label's Θ̂ "
                   "on the stored dev set (one trial per committed row; resumable).")
@click.option("--passes", type=click.IntRange(min=1), default=2, show_default=True,
              help="With --per-label: most passes over the labels (it stops early when a pass changes "
                   "nothing).")
def calibrate_command(db: Path, dev: tuple[Path, ...], thetas: list[float] | None, points: int, beam: int,
                      max_pops: int, aggregator: str, tags: str | None, per_label: bool, passes: int) -> None:
    """Parse the dev set at each candidate Θ̂, store the scores, and mark the best Θ̂.

    Each finished Θ̂ is committed at once: stopped (Ctrl-C) or killed, the same command resumes
    at the first unfinished Θ̂. `clparse parse --theta best` then uses the best one. With
    --per-label, each label's Θ̂ is then tuned on the dev set, starting from the best global Θ̂
    (`--theta best` then uses a Θ̂ per label). Stopped by a signal, it exits 130 after Ctrl-C and 143
    after SIGTERM (128 + the signal's number).

    \b
    clparse calibrate --db db/quickstart.sqlite --beam 1 --points 8
    """
    from clparse.calibrate.report import best_use, format_points
    from clparse.progress import Progress

    api.guard_writable(db)  # before the grid is read: a damaged file is named first
    if per_label and (dev or thetas):
        raise click.UsageError("--per-label tunes the stored dev set's calibration: no --dev or --thetas")
    given = click.get_current_context().get_parameter_source  # options that would be ignored in silence
    if not per_label and given("passes") is ParameterSource.COMMANDLINE:
        raise click.UsageError("--passes counts the passes of --per-label: give --per-label too")
    if (thetas or per_label) and given("points") is ParameterSource.COMMANDLINE:
        instead = "--thetas, which gives the grid" if thetas else "--per-label, which walks its calibration's"
        raise click.UsageError(f"--points sizes the default grid: not with {instead}")
    api.check_calibration(db, dev)  # no dev sentences: said at once, not after the parser's modules load
    settings = api.calibration_settings(db, beam, max_pops, aggregator, tags)
    if per_label:
        _calibrate_per_label(db, settings, passes)
        return
    if dev:  # read here too, to say how many the run's length limit leaves out (the F1 is of the rest alone)
        from clparse.calibrate.run import dev_trees

        dev_trees(db, dev, lambda text: click.echo(text, err=True))
    grid = api.calibration_grid(db, thetas, points)
    click.echo(f"calibrating at {len(grid)} Θ̂ value(s): {', '.join(f'{t:.4g}' for t in grid)}", err=True)
    flag = stop_request("Θ̂", "clparse calibrate", finishes=False)
    bar = Progress("calibrating", None, "sentences")

    def progress(theta: float, done: int, total: int) -> None:
        if bar.total is None:  # finished Θ̂ values are read back, not parsed: the total may overstate
            bar.total = total * len(grid)
        bar.update(1, f"Θ̂ = {theta:.4g}")

    with bar:
        result = api.calibrate(db, dev, grid, settings=settings, on_sentence=progress, should_stop=flag)
    if not result.calibration_id:  # every Θ̂ skipped: an empty table with exit status 0 said nothing
        from clparse.rebuild.model import usable_range  # here: it loads numba, which a usage error must not

        theta, why = max(result.skipped.items())
        raise ConfigurationError(f"{db}: no Θ̂ of the grid can be calibrated, not every label is trained past "
                                 f"{theta:g} ({why}); {usable_range(db)}")
    for theta, why in result.skipped.items():
        click.echo(one_line(f"warning: Θ̂ = {theta:g} skipped, not every label is trained past it ({why})",
                            None if verbose() else LIMIT), err=True)
    click.echo(format_points(result.points, result.best_theta, best_use(settings.aggregator)))
    if flag.requested:
        click.echo("stopped; run the same command again to resume", err=True)
        sys.exit(interrupted_status(flag.signum))


def _calibrate_per_label(db: Path, settings: api.CalibrationSettings, passes: int) -> None:
    from clparse.progress import Progress

    flag = stop_request("trial", "clparse calibrate --per-label", finishes=False)
    bar: list[Progress] = []  # the trial in flight's: a trial parses the whole dev set

    def sentence(label: str, theta: float, done: int, total: int) -> None:
        if not bar:  # made after the first sentence: it counts, but not in the rate (it began unseen)
            bar.append(Progress(f"trial {label} at Θ̂ {theta:.4g}", total, "sentences"))
            bar[0].done = bar[0].initial = done
            return
        bar[0].update(1)

    def trial(label: str, theta: float, f1: float, accepted: bool) -> None:
        for ended in bar:
            ended.close()
        bar.clear()
        click.echo(f"{label:<8} Θ̂ {theta:<10.4g} F1 {f1:6.2f}{'  kept' if accepted else ''}", err=True)

    try:
        result = api.calibrate_per_label(db, settings=settings, passes=passes, on_trial=trial,
                                         should_stop=flag, on_sentence=sentence)
    finally:
        for ended in bar:
            ended.close()
    moved = {label: t for label, t in result.thetas.items() if t != result.start_theta}
    click.echo(f"per-label Θ̂ from Θ̂ = {result.start_theta:.4g} (F1 {result.start_f1:.2f}): F1 "
               f"{result.f1:.2f} after {result.replayed + result.trials} trial(s) ({result.replayed} read "
               "back)")
    for label, theta in sorted(moved.items()):
        click.echo(f"  {label:<8} {theta:.4g}")
    if flag.requested or result.stopped:
        click.echo("stopped; run the same command again to resume", err=True)
        if flag.requested:
            sys.exit(interrupted_status(flag.signum))


@main.command("calibrate-tags")
@DB_OPTION
@click.option("--theta", type=Theta(), default="best", show_default=True, metavar="X|best",
              help="Θ̂ of the model to fit it for: parse uses the chooser at this Θ̂ only.")
@click.option("--beam", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=PARSE_BEAM, show_default=True,
              help="Agenda size the dev set is parsed with (parse's default).")
@click.option("--max-pops", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=10_000, show_default=True,
              help="Pop cap the dev set is parsed with (parse's default).")
@click.option("--aggregator", type=click.Choice(AGGREGATOR_CHOICES), default=AGGREGATOR, show_default=True,
              help="How the dev parses are scored (parse's default): parse uses the chooser with this "
                   "aggregator only.")
@click.option("--tag-alternatives", type=click.IntRange(min=1), default=3, show_default=True,
              metavar="N",
              help="Other taggings parsed per sentence besides the best, as parse --tag-alternatives.")
def calibrate_tags_command(db: Path, theta: float | str, beam: int, max_pops: int, aggregator: str,
                           tag_alternatives: int) -> None:
    """Fit how parse chooses among the stored tagger's taggings of untagged input, on the dev set.

    Parse of tokens or text tries the tagger's best tagging and up to --tag-alternatives others and
    keeps one parse. Without this, it keeps the one the search scores best. This parses every dev
    sentence from each tagging, fits a logistic regression that says when another tagging's parse is
    the better one (from the parses' confidences and the tagger's own certainty), and stores it unless,
    two-fold, it is behind the search's own choice:
    parse (tokens, text; explain and the spaCy component too) then uses it at this Θ̂ and with this
    --aggregator, at any beam and number of alternatives. It prints the dev F1 of the best
    tagging alone, of the search's choice, and of the chooser, in sample and two-fold (fitted on half
    the sentences, scored on the other half: what to expect on new text). Stopped (Ctrl-C), it stores
    nothing. See docs/tagger.md.

    \b
    clparse calibrate-tags --db db/quickstart.sqlite
    """
    from clparse.progress import Progress

    api.guard_writable(db)
    flag = stop_request("tag chooser", "clparse calibrate-tags", finishes=False)
    bar = Progress("parsing dev taggings", None, "sentences")

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(1)

    with bar:
        fit = api.calibrate_tags(db, theta, beam=beam, max_pops=max_pops, alternatives=tag_alternatives,
                                 aggregator=aggregator,
                                 on_sentence=progress, should_stop=flag,
                                 echo=lambda text: click.echo(text, err=True))
    if fit is None:
        click.echo("stopped; nothing stored: run the same command again", err=True)
        sys.exit(interrupted_status(flag.signum))
    click.echo(f"dev F1 (gold tags put back, {fit.sentences} sentences): best tagging alone "
               f"{fit.f1_best:.2f}, "
               f"the search's choice {fit.f1_rule:.2f}, the chooser {fit.f1_chooser:.2f} in sample and "
               f"{fit.f1_two_fold:.2f} two-fold")
    weights = ", ".join(f"{name} {weight:.4g}" for name, weight in fit.weights.items())
    if fit.chooser_id is None:
        from clparse.calibrate.tag_chooser import MIN_PAIRS

        kept = ("parse keeps the search's choice" if fit.in_force is None else
                f"parse still uses tag chooser {fit.in_force}, fitted earlier at this Θ̂ (--no-tag-chooser: "
                "the search's choice)")
        if fit.not_stored == "behind":
            click.echo(f"nothing stored: two-fold the chooser ({fit.f1_two_fold:.2f}) is behind the search's "
                       f"own choice ({fit.f1_rule:.2f}), so it would not help on new text; {kept}")
            return
        click.echo(f"nothing stored: only {fit.pairs} tagging(s) of the dev set parse differently from the "
                   f"best tagging, fewer than the {MIN_PAIRS} a fit needs; {kept}")
        return
    click.echo(f"stored tag chooser {fit.chooser_id} ({fit.pairs} taggings; weights {weights}) in {db}; "
               f"parse uses it at this Θ̂ with --aggregator {aggregator}")


@main.command("train-tagger")
@DB_OPTION
@click.option("--train", "train_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Treebank files to learn from (every tree, any length); default: the run's stored "
                   "training sentences.")
@click.option("--epochs", type=click.IntRange(min=1), default=25, show_default=True,
              help="Passes over the training sentences; the one best on the stored dev split is kept.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the initial weights and batch order.")
def train_tagger_command(db: Path, train_files: tuple[Path, ...], epochs: int, seed: int) -> None:
    """Train a neural tagger beside the run's CRF; parse, tag and calibrate-tags then tag with both.

    A character and word BiLSTM that also reads each word's Brown cluster (PyTorch: pip install
    'clparse[neural]'; running it later needs numpy only) is trained on what the CRF learned from (every
    tree of the training files prepare read, if they are unchanged; else the run's stored sentences;
    --train to give files), scored on the dev split after every epoch, and the best epoch is stored in
    the table tagger_nets, replacing a net stored before, unless the pair tags the dev split worse than
    parse tags it now (then nothing is stored). A word's tag then comes from the CRF's and the net's
    probabilities together (their geometric mean): on GUM dev 97.48 % against the CRF's 96.96 %
    (docs/tagger.md). A tag chooser fitted on other taggings is not used with the new net: run
    calibrate-tags again. About 60-80 s an epoch for GUM on two cores left to it.
    Stopped (Ctrl-C), it stores nothing.

    \b
    clparse train-tagger --db db/quickstart.sqlite --epochs 2
    """
    from clparse.progress import Progress

    api.guard_writable(db)
    flag = stop_request("tagger net", "clparse train-tagger", finishes=False)
    bar = Progress("training the tagger net", epochs, "epochs")

    def progress(epoch: Any) -> None:
        dev = "" if epoch.dev_accuracy is None else f", dev {100 * epoch.dev_accuracy:.2f} %"
        bar.update(1, f"loss {epoch.loss:.3f}{dev}")

    with bar:
        done = api.train_tagger(db, train_files, epochs=epochs, seed=seed, on_epoch=progress,
                                should_stop=flag, echo=lambda text: click.echo(text, err=True))
    if done is None:
        click.echo("stopped; nothing stored: run the same command again", err=True)
        sys.exit(interrupted_status(flag.signum))
    trained, stored = done.training, done.stored
    net_dev = ("" if stored.net_dev_accuracy is None else
               f"; dev: the net alone {100 * stored.net_dev_accuracy:.2f} %")
    both = "" if stored.dev_accuracy is None else f", CRF + net {100 * stored.dev_accuracy:.2f} %"
    crf = "" if done.crf_dev_accuracy is None else f", the CRF alone {100 * done.crf_dev_accuracy:.2f} %"
    source = ("every tree of the training files" if done.from_files else
              "the run's stored training sentences (the files prepare read are not where they were: --train "
              "gives every tree)")
    what = f"epoch {trained.epoch} of {epochs}, {stored.train_sentences} sentences from {source}, " \
           f"{stored.seconds:.0f} s"
    if not done.kept:
        now = ("the CRF and the net stored before" if done.replaced else "the CRF alone")
        in_use = "" if done.in_use_dev_accuracy is None else f" ({100 * done.in_use_dev_accuracy:.2f} %)"
        click.echo(f"nothing stored: with this net ({what}) the dev split is tagged worse than by {now}"
                   f"{in_use}{net_dev}{both}{crf if done.replaced else ''}; parse keeps tagging with {now} "
                   "(train more epochs, or on more sentences with --train)")
        return
    replaced = " (replacing the one stored before)" if done.replaced else ""
    click.echo(f"stored the tagger net{replaced} ({what}){net_dev}{both}{crf}; parse, tag and calibrate-tags "
               f"now tag with the CRF and the net (a tag chooser fitted before is not used with it)")


@main.command("report")
@DB_OPTION
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE.png",
              help="Also draw the paper's Figure 2 (F1 against Θ̂ and against total splits).")
@click.option("--by-label", "--labels", "show_labels", cls=Renamed, old=("--labels",), is_flag=True,
              help="Also print per-label F1 at the best Θ̂.")
def report_command(db: Path, plot: Path | None, show_labels: bool) -> None:
    """Print every calibration: Θ̂, trees, splits, recall, precision, F1, and the best Θ̂."""
    click.echo(api.report(db, show_labels, plot))
    if plot is not None:
        click.echo(f"figure written to {plot}")


@main.command("quickstart")
def quickstart_command() -> None:
    """Run the pipeline on the bundled GUM sample and print what each step did."""
    from clparse.quickstart import run_quickstart

    run_quickstart(echo=click.echo)
