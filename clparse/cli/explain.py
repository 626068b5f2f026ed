"""`clparse explain`: a parse with each constituent's confidence and the trees behind it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from clparse import api
from clparse.cli.core import Command, main
from clparse.cli.options import DB_OPTION, PARSE_BEAM, Theta, search_options, unless_given
from clparse.errors import ClparseError


def _sentences(words: tuple[str, ...], input_format: str) -> list[Any]:
    """The sentence of the arguments, or one per non-empty line of stdin (checked before the model loads)."""
    from clparse.explain import sentence_tokens

    if words:
        return [sentence_tokens(" ".join(words), input_format, "sentence")]
    import sys

    from clparse.progress import is_terminal
    from clparse.read.sentences import _lines  # stdin line by line: undecodable bytes are named

    if is_terminal(sys.stdin):  # `clparse explain --db DB` alone waited for the terminal without a word
        click.echo("no SENTENCE given: reading sentences from the terminal, one per line; Ctrl-D ends (or "
                   "give the sentence after the options: clparse explain --db DB The dog barked .)", err=True)

    found = [sentence_tokens(line, input_format, "stdin", number)
             for number, line in _lines("-") if line.strip()]
    if not found:
        raise ClparseError("no sentence given: give its tokens as arguments or on stdin")
    return found


class SentenceCommand(Command):
    """SENTENCE is treebank tokens, and some begin with a dash (``-LRB-``, ``-RRB-``, ``--``, ``-5``): click
    read ``-LRB-`` as options ("No such option '-L'") and took a ``--`` between words for the end of the
    options, dropping that token from the sentence without a word. Here an argument is an option if it names
    one of the command's options (``--top 2``, ``--top=2``) or looks like a long one (``--jsn``: click names
    the typo); every other argument is a word, in order, and ``--`` ends the options only before the first
    word."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                takes_value.update(dict.fromkeys(param.opts, not (param.is_flag or param.count)))
                takes_value.update(dict.fromkeys(param.secondary_opts, False))
        options: list[str] = []
        words: list[str] = []
        rest = iter(args)
        for arg in rest:
            if arg == "--" and not words:
                words += rest
            elif arg.split("=", 1)[0] in takes_value or re.match(r"--[A-Za-z]", arg):  # --jsn: a typo, said
                options.append(arg)
                value = next(rest, None) if takes_value.get(arg.split("=", 1)[0]) and "=" not in arg else None
                if value is not None:  # a value left out at the end: click says the option needs one
                    options.append(value)
            else:
                words.append(arg)
        return super().parse_args(ctx, [*options, "--", *words] if words else options)


@main.command("explain", cls=SentenceCommand)
@DB_OPTION
@click.argument("sentence", nargs=-1)
@click.option("--theta", type=Theta(), default="best", show_default=True, metavar="X|best",
              help="Θ̂ at which to rebuild the classifiers, or 'best' (from `clparse calibrate`).")
@search_options(PARSE_BEAM)
@click.option("--input-format", type=click.Choice(["tokens", "tagged"]), default="tokens", show_default=True,
              help="Tokens (tagged by the stored tagger) or word/TAG tokens.")
@click.option("--tag-chooser/--no-tag-chooser", default=True, show_default=True,
              help="Tokens: choose among the stored tagger's taggings with the tag chooser `clparse "
                   "calibrate-tags` fitted at this Θ̂, if any, as parse does; --no-tag-chooser: by the "
                   "search's own score.")
@click.option("--top", type=click.IntRange(min=0), default=3, show_default=True, metavar="N",
              help="Trees shown per constituent: those with the largest |κ|.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per sentence and line: every constituent with its confidence, every "
                   "tree's κ and the top trees' tests and ids (docs/explain.md).")
def explain_command(db: Path, sentence: tuple[str, ...], theta: float | str, input_format: str, top: int,
                    as_json: bool, **search: Any) -> None:
    """Parse SENTENCE (or each line of stdin) and explain every constituent's confidence.

    Prints the tree, then per phrase in tree order the confidence its classifier gave the inference
    that built it and the trees that contributed most (by |κ|): iteration, the features tested on the
    way to the leaf (has / lacks), κ, and the ids to follow in SQL (label_id, iteration, leaf node,
    feature ids), ending with a ready-to-paste `clparse sql` command. The κ of all a label's trees add
    up to the confidence. Nothing is written anywhere.

    \b
    clparse explain --db db/quickstart.sqlite The dog barked .
    echo "The/DT dog/NN barked/VBD ./." | clparse explain --db db/quickstart.sqlite --input-format tagged
    clparse explain --db db/quickstart.sqlite --theta 2 --top 1 --json The dog barked .
    """
    from clparse.explain import explain

    sentences = _sentences(sentence, input_format)
    api.check_readable(db, damage=False)  # a wrong path named at once; damage while the model loads
    # a combination: explain's own error
    parser = api.open_parser(db, theta, **unless_given(search, "beam", "aggregator"))
    if input_format == "tagged":  # as parse does: a tag no feature knows is warned about, once
        known, warned = api.known_tags(db), set()
        for number, tokens in enumerate(sentences, 1):
            for column, (_, tag) in enumerate(tokens, 1):
                if tag not in known and tag not in warned:
                    warned.add(tag)
                    click.echo(f"warning: sentence {number}: token {column} has tag {tag!r}, never seen in "
                               "training (warned once per tag)", err=True)
    for number, tokens in enumerate(sentences):
        found = explain(parser, tokens, top)
        if as_json:
            click.echo(json.dumps(found.to_dict(), ensure_ascii=False))
        else:
            click.echo(("\n" if number else "") + found.format(), nl=False)
