"""`clparse parse` and `clparse tag`: the parser and the stored POS tagger on text."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from clparse import api
from clparse.cli.core import main, one_line, with_options
from clparse.cli.options import (
    DB_OPTION,
    PARSE_BEAM,
    SEARCH_LIMIT,
    TREEBANK,
    ManyValues,
    Theta,
    close_output,
    refuse_overwriting,
    search_options,
    treebank_files,
    unless_given,
)
from clparse.errors import ClparseError
from clparse.output import FORMATS, format_result

MAX_JOBS = 64  # each process holds the model: far beyond any one machine's cores, short of exhausting memory


def _cluster(ctx: click.Context, param: click.Parameter, address: str | None) -> str | None:
    """--dask's form, checked before the model loads (Dask is imported only when parsing with it)."""
    if address is not None:
        from clparse.dask_address import check_address

        try:
            check_address(address)
        except ClparseError as exc:  # "dask: 'x': give ..." -> "give ..."
            raise click.BadParameter(str(exc).split(": ", 2)[-1], ctx, param) from None
    return address


@main.command("parse")
@DB_OPTION
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--theta", type=Theta(), default="best", show_default=True, metavar="X|best",
              help="Θ̂ at which to rebuild the classifiers, or 'best' (from `clparse calibrate`).")
@search_options(PARSE_BEAM)
@click.option("--input-format", type=click.Choice(["tokens", "tagged", "ptb", "text"]), default="tokens",
              show_default=True, help="Lines of tokens (tagged by the stored tagger), lines of word/TAG, "
                                      "PTB trees (their gold tags are used), or running text (split into "
                                      "sentences and tokens; needs pip install 'clparse[text]'). Tokens "
                                      "is the default so that output line n is always input line n's "
                                      "parse, as EVALB pairs them; a file of running text given as tokens "
                                      "gets a warning naming its first such line.")
@click.option("--max-words", type=click.IntRange(min=0), default=0, show_default=True,
              help="Sentences of more tokens (punctuation counted) get a flat tree and a warning; 0: no "
                   "limit (the pop cap keeps a long sentence's search bounded: 800 tokens in about 7 s).")
@click.option("--tag-alternatives", type=click.IntRange(min=0), default=3, show_default=True,
              metavar="N", help="Untagged input (tokens, text): also parse N other taggings, each the "
                                "CRF tagger's second choice at one of its least sure words, and keep the "
                                "parse the model scores best (or, once `clparse calibrate-tags` has fitted "
                                "one at this Θ̂, the one the tag chooser picks); about N + 1 times the "
                                "parsing time at most. 0: "
                                "the best tagging alone. See docs/tagger.md.")
@click.option("--tag-chooser/--no-tag-chooser", default=True, show_default=True,
              help="Untagged input: choose among the taggings with the tag chooser `clparse calibrate-tags` "
                   "fitted at this Θ̂ with this --aggregator, if there is one (at any beam and "
                   "--tag-alternatives); --no-tag-chooser: keep the parse the search scores best, as "
                   "without one. See docs/tagger.md.")
@click.option("--kbest", type=click.IntRange(min=1, max=SEARCH_LIMIT), default=1, show_default=True,
              metavar="K",
              help="The K best distinct trees per sentence, best first, each with its score (minus the "
                   "summed loss of its derivation; max-min: its lowest classifier confidence). With ptb "
                   "output one 'score<TAB>tree' line per tree and an empty line after each sentence; "
                   "--kbest 1 is the plain parse. See docs/output.md.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="ptb", show_default=True,
              help="ptb: one tree per line; pretty: indented trees; json: one JSON object per sentence and "
                   "line with tokens, tags, character offsets (text input), and per tree its score and every "
                   "constituent with its span and confidence (docs/output.md).")
@click.option("--constraints", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              metavar="FILE",
              help="Known brackets, one JSON object per line and sentence: {\"require\": [[0, 3, \"NP\"], "
                   "[4, 7]], \"forbid\": [[2, 5]], \"complete\": false} over the sentence's tokens (0-based, "
                   "end exclusive); every parse keeps them. Brackets no tree can keep are an error naming "
                   "the line. See docs/output.md.")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8", lazy=True), default="-",
              help="Where to write the trees (default: stdout); not the database or an input file.")
@click.option("--jobs", type=click.IntRange(min=1, max=MAX_JOBS), default=1, show_default=True, metavar="N",
              help="Parse in N processes on this machine (forks sharing the loaded model on Linux, "
                   f"else each loads it, about 300 MB; at most {MAX_JOBS}); the output's order and bytes, "
                   "and the warnings, are the same as with --jobs 1. More processes than CPUs gain nothing "
                   "(a warning says so).")
@click.option("--dask", "dask", default=None, metavar="tcp://HOST:PORT | local:N", callback=_cluster,
              help="Parse on a Dask cluster (a scheduler's address, or local:N worker processes here), with "
                   "the same output and warnings as --jobs 1. Every worker opens the database read-only at "
                   "the same path as given here (resolved to an absolute path), so they must all see it "
                   "there. Not with --jobs N > 1 (an error): the cluster's workers set the parallelism. "
                   "Needs pip "
                   "install 'clparse[dask]'. See docs/scale-out.md.")
def parse_command(db: Path, files: tuple[str, ...], theta: float | str, input_format: str, output: Any,
                  jobs: int, dask: str | None, fmt: str, constraints: Path | None, **search: Any) -> None:
    """Parse FILES (or stdin) with the parser rebuilt from the database at Θ̂.

    Writes one PTB tree per input sentence, one per line, holding every input token in order
    (tokens preprocessing sets aside, such as outer punctuation and quotes, are put back; a token
    tagged -NONE-, an empty element, is left out), so
    EVALB can score it against the original gold trees (--format pretty indents them; --format json
    gives tokens, tags, offsets, scores and constituent confidences; --kbest K the K best trees).
    With tokens or tagged input, output sentence n is the parse of input line n: an empty line gives
    (ROOT) and a warning. With text input, paragraphs (ended by blank lines) are split into sentences
    and treebank tokens: one tree per sentence found.
    A sentence given a flat tree gets a warning; a search stopped at --max-pops is completed greedily
    (a full tree) and only counted in the summary line at the end. A label not trained past Θ̂ is an
    error. Progress (with total and ETA for files) goes to stderr when it is a terminal.

    \b
    echo "The dog barked ." | clparse parse --db db/quickstart.sqlite
    echo "The dog barked. It didn't stop." | clparse parse --db db/quickstart.sqlite --input-format text
    echo "The dog barked." | clparse parse --db db/quickstart.sqlite --input-format text --format json
    echo "The dog barked ." | clparse parse --db db/quickstart.sqlite --kbest 5
    echo '{"require": [[0, 2, "NP"]]}' > brackets.jsonl
    echo "The dog barked ." | clparse parse --db db/quickstart.sqlite --constraints brackets.jsonl
    clparse parse --db db/quickstart.sqlite --input-format ptb dev.ptb -o dev.parsed
    clparse parse --db db/quickstart.sqlite --jobs 2 text.txt > text.parsed
    clparse parse --db /shared/run.sqlite --dask tcp://HOST:8786 text.txt > text.parsed
    """
    from clparse.progress import Progress, is_terminal

    names = files or ("-",)
    refuse_overwriting(output, [*names, *([constraints] if constraints else [])], db)
    if dask is not None and jobs != 1:
        raise click.UsageError("--dask and --jobs cannot be combined: with --dask the cluster's workers set "
                               "the parallelism")
    if constraints is not None and (jobs != 1 or dask is not None):  # said only after the model loaded
        raise click.UsageError("--constraints parses in one process: give --jobs 1 and no --dask")
    given = click.get_current_context().get_parameter_source("tag_alternatives")
    if given is ParameterSource.COMMANDLINE and input_format in ("tagged", "ptb"):
        click.echo(f"warning: --tag-alternatives does nothing with --input-format {input_format}: its tags "
                   "are parsed as given", err=True)  # it was ignored in silence
    if dask is not None:
        from clparse.dask_address import require_dask

        require_dask()  # how to install it, in one line, before the model loads
    api.check_readable(db, damage=False)  # a wrong path named at once; damage while the model loads
    from clparse.parse_jobs import refuse_combination

    refuse_combination(db, jobs, dask)  # from its tables, before its members load
    cpus = os.cpu_count() or 1
    if jobs > cpus:
        click.echo(f"warning: --jobs {jobs} on {cpus} CPU(s): processes beyond the CPUs only cost memory "
                   f"(about 300 MB each); --jobs {cpus} parses as fast", err=True)
    # Files are read once first: bad input is reported before the slow model load, and the count is the
    # progress total (reading is thousands of times faster than parsing). Stdin, and a pipe given as a file
    # (<(...), a FIFO), can be read only once: counting emptied it, and nothing was parsed, exit status 0.
    _refuse_wide_text([*names, *([str(constraints)] if constraints else [])])
    pipes = [name for name in names if name != "-" and not Path(name).is_file()]
    total = None if pipes else api.count_input(names, input_format)
    if constraints is not None and constraints.is_file():
        _check_constraints(constraints, total)
    # options left out are None: a combination parses at its stored beam, and refuses only what was typed
    parser = api.open_parser(db, theta, **unless_given(search, "beam", "aggregator", "tag_alternatives"))
    untagged = input_format in ("tokens", "text")
    click.echo(api.describe_parser(parser, untagged), err=True)
    note = getattr(parser, "chooser_note", None)  # a combination has none
    if note is not None and untagged and parser.options.tag_alternatives:
        click.echo(f"note: {note}", err=True)
    # The model is loaded: start the -o file now, so that a run stopped before its first tree leaves an
    # empty file, not an older run's trees that look like this one's output.
    start_file = getattr(output, "open", None)  # click's lazy file; stdout has no such method
    if callable(start_file):
        start_file()
    # No progress line when the trees go to the same terminal: it would be torn by them.
    trees_on_terminal = getattr(output, "name", "-") in ("-", "<stdout>") and is_terminal(sys.stdout)
    bar = Progress("parsing", total, "sentences", enabled=is_terminal(sys.stderr) and not trees_on_terminal)

    def warn(message: str) -> None:
        if bar.enabled and bar.done:
            click.echo("", err=True)  # keep the warning off the progress line
        click.echo(f"warning: {one_line(with_options(message))}", err=True)

    tally = api.ParseTally()
    with bar:
        results = api.parse(parser, names, input_format, warn=warn, tally=tally, jobs=jobs, dask=dask,
                            constraints=constraints)
        for number, result in enumerate(results, 1):
            output.write(format_result(result, fmt, number))
            bar.update()
    close_output(output)  # a full disk shows at the last flush: one error line, before the summary
    hint = " (raise --max-pops to search further)" if tally.completions else ""
    click.echo(f"parsed {tally.sentences} sentence(s); {tally.fallbacks} flat fallback(s); "
               f"{tally.completions} completed greedily at the pop cap{hint}", err=True)


def _refuse_wide_text(names: list[str]) -> None:
    """A file saved as UTF-16 or UTF-32 is named as such before the model loads (the reader says so too,
    but only when it reaches the file)."""
    from clparse.read.sentences import wide_text

    for name in names:
        if name == "-" or not Path(name).is_file():  # stdin and pipes cannot be peeked at without a read
            continue
        with open(name, "rb") as handle:
            error = wide_text(name, handle.read(4))
        if error is not None:
            raise error


def _check_constraints(constraints: Path, sentences: int | None) -> None:
    """Read the whole --constraints file before the model loads: a malformed line, or a count of lines
    other than the input's sentences, stopped the run only when parsing reached it, after the trees
    before it were written."""
    from clparse.search.constraints_file import read_brackets

    lines = sum(1 for _ in read_brackets(constraints))
    if sentences is not None and lines != sentences:
        raise ClparseError(f"{constraints}: {lines} line(s) of constraints for {sentences} sentence(s) of "
                           "input: give one line per sentence ({} or an empty line for none)")


@main.command("tag", cls=ManyValues)
@DB_OPTION
@click.argument("files", nargs=-1)
@click.option("--eval", "gold", multiple=True, type=TREEBANK, callback=treebank_files,
              help="Instead of tagging FILES: tag the words of these gold treebank files (or directories) "
                   "and report accuracy, speed and the commonest confusions.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="With --eval: how many (gold, tagged) confusions to list.")
@click.option("--json", "as_json", is_flag=True, help="With --eval: print JSON.")
def tag_command(db: Path, files: tuple[str, ...], gold: tuple[Path, ...], top: int, as_json: bool) -> None:
    """Tag tokenized text with the run's stored POS tagger: one sentence per line in, word/TAG out.

    Reads FILES (or stdin, or -) one sentence per line, tokens separated by spaces; writes the same
    lines with each token as word/TAG (an empty line stays empty). Running text is not split here (a
    file that looks like it gets a warning): parse --input-format text splits it. With --eval GOLD, tags
    the words of the gold trees instead and compares.

    \b
    echo "The dog barked ." | clparse tag --db db/quickstart.sqlite
    clparse tag --db db/quickstart.sqlite --eval gum/dev
    """
    if gold and files:
        # `--eval gum/dev/*.ptb` puts every file after the first among FILES: say how to give several
        raise click.UsageError("--eval tags the gold trees' own words: give FILES or --eval, not both (for "
                               "several gold files give their folder, --eval gum/dev, or --eval before "
                               "each file)")
    if as_json and not gold:
        raise click.UsageError("--json is for the report of --eval")
    if not gold and click.get_current_context().get_parameter_source("top") is ParameterSource.COMMANDLINE:
        raise click.UsageError("--top is for the report of --eval")  # tagging FILES lists no confusions
    if gold:
        report = api.evaluate_tags(db, gold)
        click.echo(json.dumps(report.to_dict(top), indent=2) if as_json else report.format(top))
        return
    # UTF-8 whatever the locale, as parse writes its trees and as parse --input-format tagged reads this
    # back: on a Windows console or PYTHONIOENCODING=latin-1, a word outside the code page was a traceback
    # (UnicodeEncodeError) and "café" came out in bytes that parse refused as not UTF-8.
    _refuse_wide_text(list(files))
    if files and all(name != "-" and Path(name).is_file() for name in files):
        # read whole first, as parse does: a bad byte on line 5000 stopped the run with 4999 lines written,
        # which a redirect kept as if they were the output (stdin and pipes can be read only once)
        api.count_input(list(files), "tokens")
    stdout = click.open_file("-", "w", encoding="utf-8")  # a standard stream: never closed
    def warn(message: str) -> None:
        click.echo(f"warning: {one_line(message)}", err=True)

    for tagged in api.tag(db, files or ("-",), warn):
        click.echo(" ".join(f"{w}/{t}" for w, t in tagged), file=stdout)
