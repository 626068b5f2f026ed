"""Faults a user met (a review of 2026-11-26): each wrong result with exit status 0, or traceback, as the
user met it, and what clparse does now.

The trained sample database is parsed at Θ̂ 4 (trained until Θ < 3) through the real ``clparse`` in a
subprocess where a file system effect matters, through click's runner otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.errors import ClparseError, ConfigurationError, ParameterError
from clparse.read import parse_tree, read_trees

BIN = Path(sys.executable).parent
THETA = "4"
BOM = b"\xef\xbb\xbf"


def clparse(*args: str | Path, stdin: str | bytes = "") -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([str(BIN / "clparse"), *map(str, args)], input=data, capture_output=True,
                          timeout=300)


def invoke(*args: str | Path, stdin: str | bytes = "") -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def error_line(stderr: bytes | str) -> str:
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert "Traceback" not in text, text
    return [line for line in text.splitlines() if line.startswith("Error:")][-1]


# ----------------------------------------------------------------------- -o onto what the command reads


def test_output_onto_the_database_is_refused_and_the_database_kept(db_copy: Path) -> None:
    before = db_copy.read_bytes()
    done = clparse("parse", "--db", db_copy, "--theta", THETA, "-o", db_copy, stdin="The dog barked .\n")
    assert done.returncode == 1
    assert error_line(done.stderr) == (f"Error: -o {db_copy}: that is the database of this command; "
                                       "write the output to another file")
    assert db_copy.read_bytes() == before


@pytest.mark.parametrize("link", [False, True])
def test_output_onto_an_input_file_is_refused_and_the_input_kept(trained_db: Path, tmp_path: Path,
                                                                 link: bool) -> None:
    """Before: the parser read its own output back as input, growing the file until killed."""
    source = tmp_path / "in.tok"
    source.write_text("The dog barked .\nA cat sat .\n", encoding="utf-8")
    target = source
    if link:  # another name for the same file
        target = tmp_path / "other-name.tok"
        os.link(source, target)
    done = clparse("parse", "--db", trained_db, "--theta", THETA, source, "-o", target)
    assert done.returncode == 1 and "an input file of this command" in error_line(done.stderr)
    assert source.read_text(encoding="utf-8") == "The dog barked .\nA cat sat .\n"


def test_treebank_preprocess_output_onto_its_input_is_refused(tmp_path: Path) -> None:
    tree = "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
    source = tmp_path / "t.ptb"
    source.write_text(tree, encoding="utf-8")
    code, _, stderr = invoke("treebank", "preprocess", source, "-o", source)
    assert code == 1 and "an input file of this command" in error_line(stderr)
    assert source.read_text(encoding="utf-8") == tree
    assert invoke("treebank", "preprocess", source, "-o", tmp_path / "out.ptb")[0] == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_at_the_output_is_one_error_line(trained_db: Path) -> None:
    done = clparse("parse", "--db", trained_db, "--theta", THETA, "-o", "/dev/full",
                   stdin="The dog barked .\n")
    assert done.returncode == 1
    assert error_line(done.stderr) == "Error: /dev/full: No space left on device; the output is incomplete"


# ----------------------------------------------------------------------- a byte-order mark first


def test_a_byte_order_mark_is_not_part_of_the_first_token(trained_db: Path, tmp_path: Path) -> None:
    plain = clparse("parse", "--db", trained_db, "--theta", THETA, "--format", "json",
                    stdin="The dog barked .\n")
    marked = clparse("parse", "--db", trained_db, "--theta", THETA, "--format", "json",
                     stdin=BOM + b"The dog barked .\n")
    assert plain.returncode == marked.returncode == 0
    assert marked.stdout == plain.stdout
    assert json.loads(marked.stdout)["tokens"][0] == "The"
    tagged = tmp_path / "bom.tagged"
    tagged.write_bytes(BOM + b"The/DT dog/NN barked/VBD ./.\n")
    done = clparse("parse", "--db", trained_db, "--theta", THETA, "--input-format", "tagged", tagged)
    shown = done.stdout.decode()
    assert done.returncode == 0 and shown.startswith("(ROOT") and "\ufeff" not in shown


def test_a_treebank_file_may_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    tree = "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
    marked = tmp_path / "bom.ptb"
    marked.write_bytes(BOM + tree.encode())
    assert [str(t) for t in read_trees(marked)] == [str(parse_tree(tree))]
    code, stdout, stderr = invoke("eval", marked, marked)
    assert code == 0, stderr
    assert "Bracketing FMeasure       = 100.00" in stdout
    code, stdout, stderr = invoke("eval", "--one-per-line", marked, marked)
    assert code == 0 and "Bracketing FMeasure       = 100.00" in stdout, stderr


# ----------------------------------------------------------------------- tags and words PTB can hold


def test_bracket_tags_of_pos_files_are_spelled_as_the_treebank_does(trained_db: Path, tmp_path: Path) -> None:
    """Before: the tags ( and ) went into the tree bare, ``(( -LRB-)``, which no reader can read back."""
    code, stdout, _ = invoke("parse", "--db", trained_db, "--theta", THETA, "--input-format", "tagged",
                             stdin="The/DT dog/NN (/( barked/VBD )/) ./.\n")
    assert code == 0
    tree = parse_tree(stdout.strip())
    assert tree.tagged_words() == [("The", "DT"), ("dog", "NN"), ("-LRB-", "-LRB-"), ("barked", "VBD"),
                                   ("-RRB-", "-RRB-"), (".", ".")]
    parsed = tmp_path / "p.ptb"
    parsed.write_text(stdout, encoding="utf-8")
    assert invoke("eval", parsed, parsed)[0] == 0


@pytest.mark.parametrize("sentence", [[("The dog", "DT"), ("barked", "VBD")], [("The", "D T")], [("", "NN")],
                                      ["The", "dog barked"], ["The", ""]])
def test_the_api_refuses_words_and_tags_no_tree_can_hold(trained_db: Path, sentence: list) -> None:
    parser = api.open_parser(trained_db, float(THETA), tag_alternatives=0)
    with pytest.raises(ParameterError, match="must be non-empty, without white space"):
        parser.parse(sentence)


# ----------------------------------------------------------------------- limits and options


def test_the_length_limit_counts_tokens_and_says_so(trained_db: Path) -> None:
    sentence = " ".join(["dog", ","] * 3) + "\n"  # 3 words, 6 tokens
    code, stdout, stderr = invoke("parse", "--db", trained_db, "--theta", THETA, "--max-words", "5",
                                  stdin=sentence)
    assert code == 0 and "flat tree (longer than 5 tokens)" in stderr, stderr


def test_search_sizes_past_the_limit_are_refused_not_a_traceback(trained_db: Path) -> None:
    for option in ("--beam", "--max-pops", "--kbest"):
        code, _, stderr = invoke("parse", "--db", trained_db, "--theta", THETA, option, str(2**64),
                                 stdin="The dog .\n")
        assert code == 2 and "is not in the range 1<=x<=2147483647" in stderr, stderr
    with pytest.raises(ConfigurationError, match="at most 2,147,483,647"):
        api.open_parser(trained_db, float(THETA), beam=2**40)


def test_one_file_name_for_the_files_is_refused(trained_db: Path) -> None:
    """Before: the name was read one character at a time (FileNotFoundError: 's')."""
    for call in (lambda: list(api.parse(trained_db, "sentences.txt", theta=float(THETA))),
                 lambda: list(api.tag(trained_db, "sentences.txt")),
                 lambda: api.count_input("sentences.txt")):
        with pytest.raises(ParameterError, match=r"give a list of file names, such as \['sentences.txt'\]"):
            call()


def test_tag_refuses_files_beside_eval(trained_db: Path, tmp_path: Path) -> None:
    """Before: the files were silently left untagged."""
    tokens = tmp_path / "p.tok"
    tokens.write_text("The dog barked .\n", encoding="utf-8")
    gold = tmp_path / "g.ptb"
    gold.write_text("(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n", encoding="utf-8")
    code, _, stderr = invoke("tag", "--db", trained_db, "--eval", gold, tokens)
    assert code == 2 and "give FILES or --eval, not both" in stderr
    assert invoke("tag", "--db", trained_db, "--eval", gold)[0] == 0


def test_clparse_error_is_what_the_checks_raise() -> None:
    # the CLI turns ClparseError into one line: the output checks must raise it, not a bare OSError
    from clparse.cli.options import close_output

    class Broken:
        name = "out.txt"

        def close(self) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(ClparseError, match="out.txt: No space left on device; the output is incomplete"):
        close_output(Broken())


def test_ctrl_c_while_parsing_is_one_line_and_status_130(trained_db: Path) -> None:
    """Before: click's "Aborted!" and status 1, unlike train and calibrate (130)."""
    import signal

    process = subprocess.Popen([str(BIN / "clparse"), "parse", "--db", str(trained_db), "--theta", THETA],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write("The dog barked .\n")
    process.stdin.flush()
    assert process.stderr.readline().startswith("parser at")  # loaded, now waiting for more input
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stderr.strip() == "Error: interrupted (Ctrl-C); what was written before it is complete"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("command", ["init", "export"])
def test_a_database_is_never_renamed_over_a_device_or_pipe(trained_db: Path, tmp_path: Path,
                                                           command: str) -> None:
    """Before: ``init --db /dev/null`` (empty, so it looked like a file to create) or ``export -o /dev/full
    --force`` replaced the device with a database, as root. A named pipe stands in for the device here."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    args = (["init", "--db", pipe] if command == "init"
            else ["export", "--db", trained_db, "-o", pipe, "--force"])
    code, _, stderr = invoke(*args)
    assert code == 1
    assert error_line(stderr) == (f"Error: {pipe}: not a regular file (a device, pipe or socket); give a "
                                  "database file's name")
    assert pipe.is_fifo()


@pytest.mark.parametrize("command", ["parse", "tag"])
def test_a_closed_standard_output_is_one_error_line(trained_db: Path, command: str) -> None:
    """Before: parse gave a traceback, and tag exit status 0 with every result lost."""
    args = [str(BIN / "clparse"), command, "--db", str(trained_db)]
    if command == "parse":
        args += ["--theta", THETA]
    done = subprocess.run(args, input=b"The dog barked .\n", stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=300, preexec_fn=lambda: os.close(1))
    assert done.returncode == 1
    assert done.stderr.decode().strip() == (
        "Error: standard output is closed; clparse writes its results there: redirect it to a file (or "
        "/dev/null) instead of closing it")
