"""`clparse combine`: parsers' k-best lists combined by constituent recombination (Chen & Kit 2012)."""

from __future__ import annotations

from pathlib import Path

import click

from clparse.cli.core import main
from clparse.cli.options import (
    AGGREGATOR,
    AGGREGATOR_CHOICES,
    SEARCH_LIMIT,
    TREEBANK,
    ManyValues,
    Renamed,
    treebank_files,
)


class MemberList(ManyValues):
    options = ("--dev",)


def _member(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[object, ...]:
    """``RUN.sqlite`` or ``RUN.sqlite@THETA`` (THETA a number or best; default best), checked early."""
    from clparse.combine.run import MemberSpec

    members = []
    for value in values:
        path, at, theta = value.rpartition("@") if "@" in value else (value, "", "best")
        theta = theta.strip()  # "RUN@ 3" was stored and shown as Θ̂ " 3"
        if at and theta != "best":
            try:
                number = float(theta)
            except ValueError:
                raise click.BadParameter(f"{value!r}: Θ̂ after @ must be a number or best", ctx,
                                         param) from None
            # -1, 0, nan or inf: "Θ̂ must be a positive number, got -1.0" once the member opened, naming none
            if not 0 < number < float("inf"):
                raise click.BadParameter(f"{value!r}: Θ̂ after @ must be a positive number (or best)", ctx,
                                         param)
        if not Path(path).is_file():
            raise click.BadParameter(f"{path}: no such database", ctx, param)
        members.append(MemberSpec("clparse", Path(path), theta or "best"))
    return tuple(members)


@main.command("combine", cls=MemberList)
@click.option("--member", "members", multiple=True, callback=_member, metavar="RUN.sqlite[@THETA]",
              help="A clparse database and the Θ̂ to parse at (a number, or best: the calibrated Θ̂; the "
                   "default). Repeat for each member.")
@click.option("--ptb-member", "ptb_members", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Another parser's parses of the dev sentences (PTB, one tree per sentence, in order; () "
                   "where it failed): a member for fitting and evaluating (it cannot parse new text).")
@click.option("--dev", multiple=True, required=True, type=TREEBANK, callback=treebank_files,
              help="Gold dev trees (files or directories) to fit on; their gold tags are parsed.")
@click.option("-o", "--output", "--out", "out", cls=Renamed, old=("--out",),
              type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The combination's database (created; or one holding only combinations: the new "
                   "combination is added and becomes the one `parse` uses).")
# at most the search's limit, as parse says it: past it the members' search refused the number once the
# members had loaded, in the library's words ("beam, max_pops and kbest must be ..."), with exit status 1
@click.option("--kbest", "k", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=10, show_default=True,
              help="Trees per sentence from each clparse member.")
@click.option("--beam", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=1000, show_default=True,
              help="The members' search beam.")
@click.option("--aggregator", type=click.Choice(AGGREGATOR_CHOICES), default=AGGREGATOR, show_default=True,
              help="What the members rank and score their K best trees by: the summed logistic loss, as "
                   "parse does by default, or max-min (every combination stored before this option). "
                   "`parse` uses the combination with the aggregator it was fitted with.")
@click.option("--max-words", type=click.IntRange(min=0), default=0, show_default=True,
              help="Fit on dev sentences of at most this many words (0: all).")
@click.option("--max-evaluations", type=click.IntRange(min=10), default=400, show_default=True,
              help="F1 evaluations per start of Powell's method.")
def combine_command(members: tuple[object, ...], ptb_members: tuple[Path, ...], dev: tuple[Path, ...],
                    out: Path, k: int, beam: int, aggregator: str, max_words: int,
                    max_evaluations: int) -> None:
    """Combine parsers by constituent recombination (Chen & Kit 2012 §3), fitted on dev.

    Each member parses the dev sentences into its K best trees; a constituent's weight is the sum, over
    members and trees holding it, of the member's weight λ times the tree's share f of its list (a
    softmax of tree scores at temperature τ); constituents below ρ are pruned and the heaviest
    compatible set is the combined tree. λ, ρ and τ are fitted by Powell's method on dev F1, and the
    combination is stored in --output (tables combinations and combination_members), where `clparse parse
    --db OUT` uses it and `clparse sql --db OUT` shows it. See docs/combination.md.

    \b
    clparse combine --member db/quickstart.sqlite@best --member db/quickstart.sqlite@10 \\
        --dev clparse/data/sample/dev.ptb --kbest 5 --beam 50 -o db/combo.sqlite
    """
    from clparse.combine.run import MemberSpec, fit_members

    specs = [*members, *(MemberSpec("ptb", p) for p in ptb_members)]
    report = fit_members(specs, list(dev), out, k=k, beam=beam, aggregator=aggregator,  # type: ignore[arg-type]
                         max_words=max_words, max_evaluations=max_evaluations,
                         echo=lambda s: click.echo(s, err=True))
    c = report.combination
    for member in c.members:
        shown = f"{member.source}@{member.theta}" if member.theta else member.source
        click.echo(f"member {shown}: dev F1 {member.dev_f1:.2f}, λ {member.weight:.3g}")
    click.echo(f"combination: dev F1 {c.dev_f1:.2f} on {c.dev_sentences} sentences (ρ {c.threshold:.3g}, "
               f"τ {c.temperature:.3g}, K {c.k}, {c.aggregator}); {report.seconds:.0f} s; stored in {out}")
