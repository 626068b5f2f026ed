"""Faults a user met with real text in and parses out (session 12): `parse` and `tag` on the command line,
the output formats, --constraints, and the spaCy component. Each test failed before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clparse.read.ptb import parse_tree
from tests.conftest import invoke_cli

THETA = "3"  # the session's trained sample is not calibrated


def test_spacy_byte_order_mark_is_not_part_of_a_word(trained_db: Path) -> None:
    """spaCy glues a byte-order mark to the first word of a file read as "utf-8" (not "utf-8-sig"), or
    makes it a token of its own: the tree held it in a word, and clparse's own reader, for which it
    separates, read that tree back with other words (or none: ``(IN \\ufeff)``)."""
    spacy = pytest.importorskip("spacy")
    import clparse.spacy_component  # noqa: F401  (registers the factory)

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("clparse", config={"db": str(trained_db), "theta": 3, "beam": 2})
    for text in ("\ufeffThe dog barked.", "\ufeff The dog barked.", "The dog \ufeff barked."):
        doc = nlp(text)
        (sent,) = doc.sents
        assert parse_tree(sent._.parse_string).words() == ["The", "dog", "barked", "."], text
        for constituent in sent._.constituents:  # every node is found again in the tree read back
            constituent._.parse_string


@pytest.mark.skipif(not os.path.isdir("/dev/fd") or sys.platform == "darwin", reason="/dev/fd of a pipe")
@pytest.mark.parametrize("input_format", ["tokens", "text"])
def test_parse_reads_a_pipe_given_as_a_file(trained_db: Path, input_format: str) -> None:
    """`clparse parse <(cmd)`: the sentences were counted for the progress total first, which read the pipe
    to its end, so nothing was left to parse: no output, "parsed 0 sentence(s)", exit status 0."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"The dog barked .\nA cat sat .\n")
    os.close(write_end)
    try:
        result = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, "--beam", "2",
                             "--input-format", input_format, f"/dev/fd/{read_end}"])
    finally:
        os.close(read_end)
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
    assert "parsed 0 sentence" not in result.stderr


def test_malformed_constraints_stop_before_any_tree(trained_db: Path, tmp_path: Path) -> None:
    """A constraints file with a bad line 2 stopped the run only when sentence 2 was reached: sentence 1's
    tree was already in the -o file, which a user takes for output. Now the whole file is read first."""
    text = tmp_path / "two.txt"
    text.write_text("The dog barked .\nA cat sat .\n", encoding="utf-8")
    out = tmp_path / "out.ptb"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{}\n{"require": [[0, 2}\n', encoding="utf-8")
    result = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, text, "--constraints", bad,
                         "-o", out])
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"Error: {bad}:2: not JSON (Expecting ',' delimiter, column 19)"
    assert not out.exists() or out.read_text() == ""
    assert "parser at" not in result.stderr  # reported before the model loads


def test_constraints_for_fewer_sentences_stop_before_any_tree(trained_db: Path, tmp_path: Path) -> None:
    """One line of constraints for two sentences: the first tree was written, then 'c.jsonl: 1 line(s) for
    more sentences'. Now the counts are compared before the model loads, in one line naming both."""
    text = tmp_path / "two.txt"
    text.write_text("The dog barked .\nA cat sat .\n", encoding="utf-8")
    short = tmp_path / "short.jsonl"
    short.write_text("{}\n", encoding="utf-8")
    result = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, text, "--constraints", short])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (f"Error: {short}: 1 line(s) of constraints for 2 sentence(s) of input: "
                                     "give one line per sentence ({} or an empty line for none)")


def test_tag_writes_utf8_whatever_the_locale(trained_db: Path, tmp_path: Path) -> None:
    """`clparse tag` wrote in the locale's encoding: with a stdout that is not UTF-8 (a Windows console or
    redirect, PYTHONIOENCODING=latin-1) an emoji was a traceback (UnicodeEncodeError), and "café" came out
    in bytes that `parse --input-format tagged` refused. It writes UTF-8, as `parse` does."""
    words = tmp_path / "words.txt"
    words.write_text("café 😀 .\n", encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    done = subprocess.run([sys.executable, "-c", "from clparse.cli import run; run()", "tag", "--db",
                           str(trained_db), str(words)], capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    words_out = [pair.rpartition(b"/")[0].decode("utf-8") for pair in done.stdout.split()]
    assert words_out == ["café", "😀", "."]


def test_constraints_with_jobs_refused_before_the_model_loads(trained_db: Path, tmp_path: Path) -> None:
    """--constraints with --jobs 2 was refused only after the model had loaded (seconds to minutes for a
    large database); the README promises option errors before anything slow starts."""
    text = tmp_path / "one.txt"
    text.write_text("The dog barked .\n", encoding="utf-8")
    brackets = tmp_path / "b.jsonl"
    brackets.write_text("{}\n", encoding="utf-8")
    result = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, "--jobs", "2", "--constraints",
                         brackets, text])
    assert result.exit_code == 2
    assert "parser at" not in result.stderr
    assert "--constraints parses in one process" in result.stderr


@pytest.mark.parametrize("input_format", ["tagged", "ptb"])
def test_tag_alternatives_with_tagged_input_is_not_ignored_in_silence(trained_db: Path, tmp_path: Path,
                                                                       input_format: str) -> None:
    """--tag-alternatives 5 with tagged or PTB input changed nothing and said nothing."""
    given = tmp_path / "in.txt"
    given.write_text("The/DT dog/NN barked/VBD ./.\n" if input_format == "tagged"
                     else "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n", encoding="utf-8")
    result = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, "--input-format", input_format,
                         "--tag-alternatives", "5", given])
    assert result.exit_code == 0, result.stderr
    assert (f"warning: --tag-alternatives does nothing with --input-format {input_format}: its tags are "
            "parsed as given") in result.stderr
    quiet = invoke_cli(["parse", "--db", trained_db, "--theta", THETA, "--input-format", input_format, given])
    assert "tag-alternatives" not in quiet.stderr


def test_constraints_not_utf8_names_line_and_byte(tmp_path: Path) -> None:
    """A constraints file in Latin-1 was reported as 'not UTF-8 text (... at byte 831)' for a byte 9,023
    bytes into the file, on line 3001: the position within an 8 KB decoding chunk, and no line."""
    from clparse.errors import BracketError
    from clparse.search.constraints_file import read_brackets

    path = tmp_path / "latin1.jsonl"
    path.write_bytes(("{}\n" * 3000 + '{"require": [[0, 2, "NPé"]]}\n').encode("latin-1"))
    with pytest.raises(BracketError) as error:
        list(read_brackets(path))
    assert str(error.value) == f"{path}:3001: byte 24 is not UTF-8 text (another encoding?)"
    crlf = tmp_path / "crlf.jsonl"  # a byte-order mark, CRLF and a lone CR still read as before
    crlf.write_bytes(b'\xef\xbb\xbf{}\r\n{"require": [[0, 2]]}\r{}')
    assert [len(b.required) for b in read_brackets(crlf)] == [0, 1, 0]


@pytest.mark.parametrize("command", ["parse", "tag", "constraints"])
def test_utf16_file_is_named_as_such(trained_db: Path, tmp_path: Path, command: str) -> None:
    """A file saved as UTF-16 (Windows PowerShell 5's `>`, Notepad's "Unicode") was 'binary data (NUL
    byte), not text' (or 'byte 1 is not UTF-8'): the user was told the wrong thing about their text."""
    wide = tmp_path / "wide.txt"
    wide.write_bytes("The dog barked .\r\n".encode("utf-16"))  # with its byte-order mark, as Windows writes
    plain = tmp_path / "plain.txt"
    plain.write_text("The dog barked .\n", encoding="utf-8")
    args: list[object] = {"parse": ["parse", "--db", trained_db, "--theta", THETA, wide],
                          "tag": ["tag", "--db", trained_db, wide],
                          "constraints": ["parse", "--db", trained_db, "--theta", THETA, plain,
                                          "--constraints", wide]}[command]
    result = invoke_cli(args)
    assert result.exit_code == 1
    bom = "FF FE" if sys.byteorder == "little" else "FE FF"
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {wide}:1: UTF-16 text (it starts with the bytes {bom}); clparse reads UTF-8: save the file "
        "as UTF-8")


def test_tag_reports_a_bad_line_before_writing_anything(trained_db: Path, tmp_path: Path) -> None:
    """`clparse tag` stopped at a byte that is not UTF-8 only when it reached it, with the lines before
    already written (a redirect kept them as if they were the output); it reads files whole first, as
    `parse` does."""
    words = tmp_path / "words.txt"
    words.write_bytes(b"The dog barked .\nA cat \xe9 .\n")
    result = invoke_cli(["tag", "--db", trained_db, words])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (f"Error: {words}:2: byte 7 is not UTF-8 text (binary file, or another "
                                     "encoding?)")
