"""Running text given as tokens (the default input format) is warned about once a file, not parsed silently.

A new user who gives `parse` a paragraph got one long "sentence" with `dog,` and `said.` as tokens, exit 0 and
no word said. Tokens stay the default (output line n is input line n's parse), and such a file now gets one
warning naming file, line and token; the trees are the same bytes as before.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clparse.data import sample_path
from clparse.read import read_trees
from clparse.read.sentences import glued_punctuation, read_sentences, running_text_token

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
PARAGRAPH = ('Dr. Smith went to Washington (D.C.) on Jan. 5. "It wasn\'t easy," she said.\n'
             "The cost was $4.50 -- or so they claim! Then\nthey left.\n")
WARNING = ("warning: {name}:1: token 6 '(D.C.)' looks like running text (punctuation on a word); tokens "
           "input reads each line as one sentence split at spaces: for running text, clparse parse "
           "--input-format text (warned once a file)")


def clparse(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "clparse"), *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=ENV, timeout=300)


@pytest.mark.parametrize(("line", "flagged"), [
    ("The dog barked .", None),
    ("Hello , world", None),
    ("Hello, world", 0),                      # a comma on a word
    ("The dog barked. It ran .", 2),          # a lower-case word's period before a capital
    ("I don't know", 1),                      # n't not split off
    ("I do n't know", None),
    ("`` It is '' , she said .", None),
    ('"It is" .', 0),                         # a quote on a word
    ("-LRB- D.C. -RRB- .", None),
    ("in (D.C.) today", 1),                   # brackets on a word
    ("Mr. Smith met Dr. Jones in the U.S. .", None),   # abbreviations are treebank tokens
    ("the students ' books", None),
    ("he 's here", None),                     # clitics start with an apostrophe
    ("1,000 people , 3.5 %", None),           # a comma inside a number
    ("?! ...", None),                         # punctuation alone
    ("etc. and so on", None),                 # a period before a lower-case word
    ("The dog barked.", 2),                   # the sentence's period on its last word
    ("and so on etc.", None),                 # treebanks keep the period in "etc." at the end
    ("He met Mr.", None),                     # a capital's period: an abbreviation, maybe
])
def test_hand_worked_lines(line: str, flagged: int | None) -> None:
    assert running_text_token(line.split()) == flagged


def test_no_false_alarm_on_the_bundled_treebank() -> None:
    for split in ("train", "dev"):
        for tree in read_trees(sample_path(split)):
            words = [w for w, t in tree.tagged_words() if t != "-NONE-"]
            assert running_text_token(words) is None, words


@given(st.lists(st.sampled_from(["the", "dog", "barked", ",", ".", "``", "''", "-LRB-", "-RRB-", "n't", "'s",
                                 "Smith", "Mr.", "U.S.", "3.5", "1,000", "?", "!", ";", "--"]), max_size=30))
def test_space_separated_punctuation_is_never_flagged(tokens: list[str]) -> None:
    # Punctuation standing as its own token, as treebank tokens have it, is never read as running text
    assert running_text_token(tokens) is None


@given(st.lists(st.sampled_from(["the", "dog", "barked", "Smith", "it"]), min_size=1, max_size=10),
       st.data())
def test_a_word_with_a_comma_on_it_is_flagged_where_it_stands(words: list[str], data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(words) - 1))
    tokens = [*words[:at], words[at] + ",", *words[at + 1:]]
    assert running_text_token(tokens) == at


def test_reading_warns_once_a_file_with_its_first_such_line(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("The dog barked .\nHello, world\nBye, now\n", encoding="utf-8")
    second.write_text("The dog barked .\n", encoding="utf-8")
    said: list[str] = []
    sentences = list(read_sentences([str(first), str(second)], "tokens", said.append))
    assert sentences == [["The", "dog", "barked", "."], ["Hello,", "world"], ["Bye,", "now"],
                         ["The", "dog", "barked", "."]]
    assert len(said) == 1 and said[0].startswith(f"{first}:2: token 1 'Hello,' looks like running text")


def test_parse_and_tag_warn_once_and_write_the_same_trees(trained_db: Path, tmp_path: Path) -> None:
    text = tmp_path / "paragraph.txt"
    text.write_text(PARAGRAPH, encoding="utf-8")
    parse = ["parse", "--db", trained_db, "--theta", "3", "--beam", "1"]
    for command in (parse, [*parse, "--jobs", "2"], ["tag", "--db", trained_db]):
        done = clparse(*command, text)
        assert done.returncode == 0, done.stderr
        told = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
        assert told == [WARNING.format(name=text)], done.stderr
        assert len(done.stdout.splitlines()) == 3  # still one output line per input line
        piped = clparse(*command, stdin=PARAGRAPH)
        assert piped.stdout == done.stdout
        assert [line for line in piped.stderr.splitlines() if line.startswith("warning:")] == \
            [WARNING.format(name="-")]
    tokens = clparse(*parse, stdin="The dog barked .\nHe said so .\n")
    assert tokens.returncode == 0 and "warning" not in tokens.stderr


def test_parser_warns_of_a_string_that_looks_like_running_text_at_the_callers_line(trained_db: Path) -> None:
    from clparse.errors import RunningTextWarning
    from clparse.parser import Parser

    parser = Parser.from_db(trained_db, theta=3, beam=1)
    with pytest.warns(RunningTextWarning, match=r"looks like running text.*Parser\.parse_text") as caught:
        glued = parser.parse("The dog barked.")
    assert [w.filename for w in caught] == [__file__]  # the user's line, not clparse's
    assert glued.tree.words() == ["The", "dog", "barked."]  # split at spaces, as before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parser.parse("The dog barked .")  # treebank tokens: nothing to say
        parser.parse(["The", "dog", "barked."])  # a list is taken as the tokens it is
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")  # Python's own filter: once a calling line and text
        list(parser.parse_many(["Hello, world", "Bye, now", "So long, then"]))
    assert [w.category for w in seen] == [RunningTextWarning]  # one for the document, not one a sentence


# The test as first written, a regular expression: an oracle on short tokens (on long runs of ")" it
# backtracked for seconds, which the string methods do not).
GLUED_AS_FIRST_WRITTEN = re.compile(
    r"""^[("\u201c\[]+[^\W_]|[^\W_][,;!?)"\u201d\]]+['"\u201d\u2019)]*$|[^\W_]n't$""", re.IGNORECASE)


@given(st.text(alphabet="aZ9_é(\"\u201c[,;!?)\u201d]'\u2019.nNtT-", min_size=1, max_size=10))
def test_glued_punctuation_is_the_expression_it_replaced(token: str) -> None:
    assert glued_punctuation(token) == (len(token) > 1 and GLUED_AS_FIRST_WRITTEN.search(token) is not None)


def test_a_long_token_is_quoted_short_in_the_warning(tmp_path: Path) -> None:
    source = tmp_path / "long.txt"
    source.write_text("a" + ")" * 5000 + "b word,\n", encoding="utf-8")
    said: list[str] = []
    list(read_sentences([str(source)], "tokens", said.append))
    assert len(said) == 1 and "token 2 'word,'" in said[0]
    source.write_text("(" + "x" * 5000 + "\n", encoding="utf-8")
    said.clear()
    list(read_sentences([str(source)], "tokens", said.append))
    assert len(said) == 1 and "'(" + "x" * 39 + "…'" in said[0] and "x" * 40 not in said[0]


def test_option_names_are_not_rewritten_inside_the_users_quoted_text() -> None:
    import click

    from clparse.cli import main
    from clparse.cli.core import with_options

    ctx = click.Context(main.commands["parse"])
    assert with_options("max_pops: too small; token 2 'max_words,' looks", ctx) == \
        "--max-pops: too small; token 2 'max_words,' looks"
    assert with_options("the run's max_pops and the user's max_words", ctx) == \
        "the run's --max-pops and the user's --max-words"
    assert with_options('token "don\'t max_words" and max_words', ctx) == \
        'token "don\'t max_words" and --max-words'
