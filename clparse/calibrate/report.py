"""Calibration tables and the paper's Figure 2 (F1 against Θ̂ and against the total number of splits)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clparse.atomic_write import write_whole
from clparse.errors import ConfigurationError, ParameterError
from clparse.store.calibration import Calibrations
from clparse.store.database import Database


#: What the best-Θ̂ line says by default: the calibration is the one ``--theta best`` reads.
BEST_USE = "parse with --theta best, or this number in full"


def theta_best(aggregator: str) -> str:
    """The options that parse at the best Θ̂ of a calibration made with ``aggregator``: ``--theta best``
    reads the latest calibration made with the parser's aggregator (the default unless named)."""
    from clparse.search.aggregate import DEFAULT_AGGREGATOR

    return "--theta best" if aggregator == DEFAULT_AGGREGATOR else f"--aggregator {aggregator} --theta best"


def best_use(aggregator: str) -> str:
    """:data:`BEST_USE` for a calibration made with ``aggregator``."""
    return f"parse with {theta_best(aggregator)}, or this number in full"


def format_points(points: Sequence[Any], best: float | None, use: str = BEST_USE) -> str:
    """The calibration's points as a table, Θ̂ falling, and its best Θ̂ with ``use``: how to parse at it."""
    header = (f"{'Θ̂':>10} {'trees':>6} {'splits':>7} {'recall':>7} {'prec.':>7} {'F1':>7} {'exact':>6} "
              f"{'flat':>5} {'capped':>6} {'s':>7}")
    lines = [header, "-" * len(header)]
    for p in sorted(points, key=lambda p: -p.theta):
        mark = "  <- best" if best is not None and p.theta == best else ""
        lines.append(f"{p.theta:>10.4g} {p.trees:>6} {p.splits:>7} {p.recall:>7.2f} {p.precision:>7.2f} "
                     f"{p.f1:>7.2f} {p.exact:>6.1f} {p.fallbacks:>5} {p.completions:>6} "
                     f"{p.seconds:>7.1f}{mark}")
    if best is not None:
        # The table rounds; a Θ̂ typed back from it may fall just above a tree's Θ and drop it.
        lines.append(f"best Θ̂ = {best!r} ({use})")
        if all(p.theta != best for p in points):  # `calibrate --thetas` shows only the Θ̂ it was given
            lines[-1] += ("; it is a Θ̂ parsed earlier in this calibration, not in the table above "
                          "(`clparse report` lists every one)")
    return "\n".join(lines)


def _calibrations(db: str | Path) -> list[tuple[dict[str, Any], list[Any]]]:
    from clparse.store.reading import combination_error, run

    database = Database.of(db, readonly=True)
    with database.raw() as connection:  # "run `clparse calibrate`" is no advice for a combination
        combined = combination_error(connection, database.path)
        if combined is not None:
            raise combined
        calibrations = Calibrations(database).calibrations()
        if not calibrations:  # nor for a database without a run: calibrate then asked for dev files
            run(connection, database.path)
    return calibrations


def format_report(db: str | Path, show_labels: bool = False) -> str:
    calibrations = _calibrations(db)
    choosers = _choosers_block(db)
    if not calibrations and not choosers:
        raise ConfigurationError(f"{db}: no calibration yet; run `clparse calibrate --db {db}`")
    store = Calibrations(Database.of(db, readonly=True))
    blocks = []
    for row, points in calibrations:
        settings = json.loads(row["settings_json"])
        aggregator = settings["aggregator"]
        latest = store.read_by_theta_best(aggregator)  # for a parser scoring as this calibration did
        title = (f"calibration {row['id']}: beam {settings['beam']}, max pops {settings['max_pops']}, "
                 f"{aggregator}, {settings['tags']} tags, dev from {settings['dev']}")
        blocks.append(title + "\n" + format_points(points, row["best_theta"],
                                                   _best_use(row["id"], latest, store, aggregator)))
        per_label = _per_label_block(db, row["id"])
        if per_label:
            blocks.append(per_label)
        if show_labels and row["best_theta"] is not None:
            blocks.append(_label_table(db, row["id"], row["best_theta"]))
    if choosers:
        blocks.append(choosers)
    return "\n\n".join(blocks)


def _choosers_block(db: str | Path) -> str:
    """The tag choosers `clparse calibrate-tags` stored (parse uses the latest at its Θ̂ and aggregator) and
    their dev F1s."""
    from clparse.store.tag_choosers import fits

    rows = fits(db)
    if not rows:
        return ""
    header = (f"{'chooser':>7} {'Θ̂':>10} {'aggregator':>10} {'beam':>5} {'alt.':>4} {'pairs':>6} {'best':>6} "
              f"{'search':>6} {'chooser':>7} {'2-fold':>6}")
    lines = ["tag choosers (dev F1 from raw tokens, gold tags put back: the best tagging alone, the search's "
             "choice, the chooser in sample and two-fold)", header, "-" * len(header)]
    for row in rows:
        theta = str(row["theta"])
        shown = "per label" if theta.startswith("{") else f"{float(theta):.4g}"
        lines.append(f"{row['id']:>7} {shown:>10} {row['aggregator']:>10} {row['beam']:>5} "
                     f"{row['alternatives']:>4} "
                     f"{row['pairs']:>6} {row['f1_best']:>6.2f} {row['f1_rule']:>6.2f} "
                     f"{row['f1_chooser']:>7.2f} {row['f1_two_fold']:>6.2f}")
    return "\n".join(lines)


def _best_use(calibration_id: int, latest: tuple[int, float] | None, store: Calibrations,
              aggregator: str) -> str:
    """How to parse at a calibration's best Θ̂. Only the most recently updated calibration made with the
    parser's aggregator (``latest``; else the latest of any) is what ``--theta best`` reads, and after
    ``calibrate --per-label`` it reads the per-label Θ̂, not this number (every calibration's line said
    "--theta best, or this number in full")."""
    per_label = store.per_label_thetas(calibration_id) is not None
    best = theta_best(aggregator)
    if latest is None or latest[0] != calibration_id:
        where = f"{best} reads calibration {latest[0]}" if latest else f"{best} reads another"
        return (f"{where}; give --theta this number in full to parse at it"
                + (", every label at it: the per-label Θ̂ below are not used" if per_label else ""))
    if per_label:
        return (f"the global Θ̂: {best} parses with the per-label Θ̂ below; --theta this number in "
                "full, with every label at it")
    return best_use(aggregator)


def _per_label_block(db: str | Path, calibration_id: int) -> str:
    """The per-label Θ̂ of a calibration (``calibrate --per-label``), if any trial was run."""
    store = Calibrations(Database.of(db, readonly=True))
    trials = [(f1, accepted) for _, _, f1, accepted in store.trials(calibration_id)]
    thetas = store.per_label_thetas(calibration_id)
    best = store.best_theta(calibration_id)
    if not trials:
        return ""
    kept = [f1 for f1, accepted in trials if accepted]
    lines = [f"per-label Θ̂: {len(trials)} trial(s), {len(kept)} kept; dev F1 "
             + (f"{max(kept):.2f} (every other label at Θ̂ = {best:g})" if kept else "unchanged")]
    for label, theta in sorted((thetas or {}).items()):
        if theta != best:
            lines.append(f"  {label:<8} {theta:.4g}")
    return "\n".join(lines)


def _label_table(db: str | Path, calibration_id: int, theta: float) -> str:
    rows = Calibrations(Database.of(db, readonly=True)).label_scores(calibration_id, theta)
    lines = [f"per label at Θ̂ = {theta:g}",
             f"{'label':<8} {'gold':>6} {'test':>6} {'recall':>7} {'prec.':>7} {'F1':>7}"]
    lines += [f"{r['label']:<8} {r['gold']:>6} {r['test']:>6} {r['recall']:>7.2f} {r['precision']:>7.2f} "
              f"{r['f1']:>7.2f}"
              for r in rows]
    return "\n".join(lines)


def draw_figure(db: str | Path, path: str | Path) -> None:
    """Recall, precision and F1 against Θ̂ (falling, as training proceeds) and against total splits."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    path = Path(path)
    # the format from the name, checked before drawing (matplotlib's ValueError was a traceback); a name
    # without a suffix is a PNG under that very name (matplotlib added .png, so the file said was not there)
    kind = path.suffix[1:].lower() or "png"
    formats = sorted(plt.figure().canvas.get_supported_filetypes())
    plt.close("all")
    if kind not in formats:
        raise ParameterError("plot", f"{path}: cannot draw a .{kind} file; name it FILE.png (or "
                                     f"{', '.join('.' + f for f in formats if f != 'png')})")
    if path.exists() and path.resolve() == Path(db).resolve():
        raise ParameterError("plot", f"{path} is the database; name a new file for the figure")
    calibrations = [(row, points) for row, points in _calibrations(db) if points]
    if not calibrations:
        raise ConfigurationError(f"{db}: no calibration points to plot")
    figure, (by_theta, by_splits) = plt.subplots(2, 1, figsize=(7, 7))
    for row, points in calibrations:
        settings = json.loads(row["settings_json"])
        name = f"#{row['id']} beam {settings['beam']}, {settings['tags']} tags"
        thetas = [p.theta for p in points]
        splits = [p.splits for p in points]
        for axis, xs in ((by_theta, thetas), (by_splits, splits)):
            axis.plot(xs, [p.f1 for p in points], marker="o", label=f"F1 {name}")
            axis.plot(xs, [p.recall for p in points], linestyle="--", alpha=0.6, label=f"recall {name}")
            axis.plot(xs, [p.precision for p in points], linestyle=":", alpha=0.6, label=f"precision {name}")
    by_theta.set_xscale("log")
    # Label 1-2-5 steps (10^k alone is too sparse for the few decades Θ̂ spans).
    by_theta.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    by_theta.xaxis.set_minor_locator(matplotlib.ticker.LogLocator(subs=(2.0, 5.0)))
    by_theta.xaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    by_theta.invert_xaxis()  # Θ̂ falls as training proceeds
    by_theta.set_xlabel("minimum reduction in loss Θ̂")
    by_splits.set_xlabel("total decision-tree splits in the parser")
    for axis in (by_theta, by_splits):
        axis.set_ylabel("PARSEVAL (%)")
        axis.grid(True, alpha=0.3)
    by_theta.legend(fontsize=7)
    figure.suptitle(f"dev accuracy as training progresses ({Path(db).name})")
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format=kind, dpi=120)
    plt.close(figure)

    def put(where: Path) -> None:  # written and closed here: matplotlib's own file was closed unchecked
        with open(where, "wb") as handle:
            handle.write(image.getvalue())

    write_whole(path, put)  # Ctrl-C or a full disk half-way left a truncated image in place of the figure
