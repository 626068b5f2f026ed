"""``clparse quickstart``: the whole pipeline on the bundled GUM sample, in a few minutes.

prepare (examples + tagger) → train every label → calibrate Θ̂ on the dev sample → parse a few
sentences with the calibrated parser. Everything lands in ``db/quickstart.sqlite``; each step
prints what it did and the command that does the same by hand. Running it again reuses what is
already there (training and calibration resume rather than restart).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from clparse.data import sample_path
from clparse.progress import Progress, Ticker, TrainingProgress

#: Training stops here on the sample: Θ falls with the number of examples (about 28 k per label here,
#: against about 1 M on all of GUM), so the sample's Θ scale is much smaller.
QUICKSTART_THETA = 1.0
#: Sentences the sample's model parses sensibly (checked in tests/test_rough_edges.py): it learns from 146
#: short sentences, so most sentences get odd trees (an SBARQ over a statement, say), and the demo says so.
EXAMPLES = ["The city has a large park .", "We visited the museum in the morning .",
            "They went to the market ."]


def run_quickstart(echo: Callable[[str], object] = print, db: Path = Path("db/quickstart.sqlite"),
                   until_theta: float = QUICKSTART_THETA, beam: int = 10,
                   stream: IO[str] | None = None) -> None:
    """The pipeline with each step's result on ``echo`` and live progress on ``stream`` (stderr; only
    drawn when it is a terminal)."""
    from clparse import api
    from clparse.calibrate.report import format_points
    from clparse.train import StopRule, format_status

    train_file, dev_file = sample_path("train"), sample_path("dev")
    # the commands shown are to be pasted: a path with a space (an install under "My Projects") is quoted
    at, train_at, dev_at = (shlex.quote(str(path)) for path in (db, train_file, dev_file))
    echo(f"== 1. prepare: clparse prepare --db {at} --train {train_at} --dev {dev_at}")
    api.init(db, echo=echo)
    bars: list[Progress] = []

    def start(total: int) -> None:
        bars.append(Progress("generating examples", total, "sentences", stream))

    def tagger() -> None:
        for bar in bars:  # the examples are written
            bar.close()
        bars.append(Ticker("training the POS tagger", stream).begin())

    try:
        progress = api.PrepareProgress(start=start, sentences=lambda n: bars[-1].update(n), tagger=tagger)
        echo(api.prepare(db, [train_file], [dev_file], progress=progress).message)
    finally:
        for bar in bars:
            bar.close()
    echo(api.sql(db, "SELECT name, candidates, positives, examples AS distinct_examples FROM labels "
                       "ORDER BY positives DESC LIMIT 5"))

    echo(f"== 2. train every label: clparse train --db {at} --until-theta {until_theta:g}")
    rule = StopRule(until_theta=until_theta)
    labels = [r.label for r in api.status(db)]
    with TrainingProgress(len(labels), stream, count=lambda: len(api.finished_labels(db, labels, rule))) \
            as training:
        summary = api.train(db, until_theta=until_theta,
                            on_iteration=lambda label, r: training.iteration(label, r.iteration, r.theta))
        training.finish()
    echo(format_status(api.status(db)))
    for label, error in summary.failures.items():
        echo(f"warning: {label} failed: {error}")
    echo("\nThe Θ trajectory of NP (clparse sql):")
    echo(api.sql(db,
                 "SELECT i.iteration, round(i.theta, 3) AS theta, i.splits, round(i.loss_after, 1) AS loss "
                 "FROM iterations i JOIN labels l ON l.id = i.label_id WHERE l.name = 'NP' "
                 "AND i.iteration % 20 = 1 ORDER BY i.iteration"))

    grid = api.calibration_grid(db, points=8)
    echo(f"== 3. calibrate Θ̂ on the dev sample (greedy): clparse calibrate --db {at} --beam 1 --points 8")
    with Progress("calibrating", None, "sentences", stream) as bar:
        def sentence(theta: float, done: int, total: int) -> None:
            if bar.total is None:
                bar.total = total * len(grid)
            bar.update(1, f"Θ̂ = {theta:.4g}")

        result = api.calibrate(db, thetas=grid, settings=api.calibration_settings(db, beam=1),
                               on_sentence=sentence)
    echo(format_points(result.points, result.best_theta))

    echo(f"\n== 4. parse: clparse parse --db {at} --theta best --beam {beam} (tokens tagged by the stored "
         "tagger)")
    echo(toy_model_note(db, result.points, result.best_theta))
    parser = api.open_parser(db, "best", beam=beam)
    for sentence_text in EXAMPLES:
        echo(str(parser.parse(sentence_text)))
    echo(f"\nNext: clparse report --db {at} --plot fig2.png; clparse sql --db {at} (see README for queries)")


def toy_model_note(db: Path, points: list[Any], best_theta: float | None) -> str:
    """What the demo parses can be trusted for: a toy model, said plainly with its size and dev F1."""
    from clparse import api

    # training sentences counted only if trained on (those prepare stored but skipped are not learnt from)
    counts = json.loads(api.sql(db, "SELECT split, sum(split = 'dev' OR trained) AS n FROM sentences "
                                    "GROUP BY split", fmt="json"))
    sentences = {row["split"]: row["n"] for row in counts}
    f1 = next((p.f1 for p in points if p.theta == best_theta), None)
    scored = f", F1 {f1:.1f} on its {sentences.get('dev', 0)} dev sentences" if f1 is not None else ""
    return (f"(A toy model: trained on the sample's {sentences.get('train', 0)} training sentences of at "
            f"most 15 words{scored}. It parses these short sentences sensibly and most others oddly; "
            "train on a real treebank for a real parser: README, \"Training: start, stop, resume, watch\".)")
