"""Faults a user met reading treebanks and preparing runs (session 12), each fixed and held here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clparse import api
from clparse.data import sample_path
from clparse.preprocess import preprocess_tree
from clparse.errors import ConfigurationError, DatabaseError, TreebankError
from clparse.read import ReadReport, format_tree, parse_tree, read_trees
from tests.conftest import invoke_cli, read_rows


def _quick_prepare(db: Path, train: list[Path], dev: list[Path] | None = None, **settings: object) -> str:
    """api.prepare with the quickest tagger; returns what it warned."""
    warned: list[str] = []
    api.prepare(db, train, dev or [], tagger="perceptron", tagger_iterations=1, warn=warned.append,
                **settings)  # type: ignore[arg-type]
    return "\n".join(warned)


def _sample_plus(tmp_path: Path, extra: str, name: str = "train.mrg") -> Path:
    path = tmp_path / name
    path.write_text(sample_path("train").read_text(encoding="utf-8") + "\n" + extra, encoding="utf-8")
    return path


# ---------------------------------------------------------------- a wrapper with several children


def test_a_wrapper_with_several_children_is_the_root_not_a_phrase() -> None:
    for text in ["( (S (NP (PRP I)) (VP (VBD ran))) (. .))", "(ROOT (S (NP (PRP I)) (VP (VBD ran))) (. .))",
                 "(TOP (S (NP (PRP I)) (VP (VBD ran))) (. .))"]:
        result = preprocess_tree(parse_tree(text))
        assert result is not None
        assert format_tree(result.tree) == "(ROOT (S (NP (PRP I)) (VP (VBD ran))))", text
    two = "( (S (NP (PRP I)) (VP (VBD ran))) (S (NP (PRP we)) (VP (VBD sat))))"
    still_two = preprocess_tree(parse_tree(two))
    assert still_two is not None
    assert format_tree(still_two.tree).startswith("(ROOT (S (NP (PRP I))")


def test_prepare_trains_no_empty_label_from_a_bare_wrapper(tmp_path: Path) -> None:
    """It trained a label "" and stored "(ROOT ( (S ...)))", a tree no reader takes back."""
    train = _sample_plus(tmp_path, "( (S (NP (PRP I)) (VP (VBD ran))) (. .))\n"
                                   "(ROOT (S (NP (PRP We)) (VP (VBD sat))) (. .))\n")
    db = tmp_path / "run.sqlite"
    _quick_prepare(db, [train])
    labels = [name for (name,) in read_rows(db, "SELECT name FROM labels")]
    assert "" not in labels
    trees = [tree for (tree,) in read_rows(db, "SELECT tree FROM sentences")]
    assert "(ROOT (S (NP (PRP I)) (VP (VBD ran))))" in trees
    assert not any("(ROOT (ROOT" in tree or "( (" in tree for tree in trees)


# ---------------------------------------------------------------- reading: line ends, byte-order marks, bytes

GOOD = "(ROOT (S (NP (PRP I)) (VP (VBD ran))))"


def _error(path: Path) -> str:
    with pytest.raises(TreebankError) as caught:
        list(read_trees(path))
    return str(caught.value)


def test_errors_in_a_file_with_cr_line_ends_name_the_right_line(tmp_path: Path) -> None:
    """A classic Mac file (CR alone ends a line) was read as one line: every error was on line 1."""
    path = tmp_path / "mac.mrg"
    path.write_bytes(f"{GOOD}\r{GOOD}\r(ROOT (S (NP (PRP We)) (VP (VBD sat) dog)))\r".encode())
    assert _error(path) == f"{path}:3:38: leaf 'dog' without a tag"


def test_a_byte_order_mark_in_mid_file_is_not_text(tmp_path: Path) -> None:
    """Files joined with `cat` carry a BOM where the second began: "text '\\ufeff' outside any bracket"."""
    path = tmp_path / "joined.mrg"
    path.write_bytes(f"{GOOD}\n".encode() + b"\xef\xbb\xbf" + f"{GOOD}\n".encode())
    assert len(list(read_trees(path))) == 2
    result = invoke_cli(["treebank", "stats", "--json", path])
    assert result.exit_code == 0 and json.loads(result.stdout)["sentences"] == 2


def test_a_byte_that_is_not_utf8_is_named_with_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.mrg"
    path.write_bytes(f"{GOOD}\n".encode() + b"(ROOT (S (NP (NN caf\xe9))))\n")
    assert _error(path) == (f"{path}:2:21: byte 0xE9 is not UTF-8 text (another encoding, such as Latin-1? "
                            "or a binary file)")


# ---------------------------------------------------------------- --skip-bad


def _lenient(path: Path) -> tuple[list[list[str]], ReadReport]:
    report = ReadReport()
    return [tree.words() for tree in read_trees(path, skip_bad=True, report=report)], report


def test_skip_bad_keeps_the_good_trees_on_a_bad_trees_line(tmp_path: Path) -> None:
    """Several trees on a line and one bad: all of them went, and "skipped 1" was said."""
    path = tmp_path / "lines.mrg"
    path.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran)))) (ROOT (S (NP (PRP We)) (VP (VBD sat) dog))) "
                    "(ROOT (S (NP (PRP You)) (VP (VBD sat))))\n(ROOT (S (NP (PRP They)) (VP (VBD ran))))\n")
    words, report = _lenient(path)
    assert words == [["I", "ran"], ["You", "sat"], ["They", "ran"]]
    assert report.skipped == 1 and report.first_errors == [f"{path}:1:77: leaf 'dog' without a tag"]
    result = invoke_cli(["treebank", "stats", "--json", "--skip-bad", path])
    assert result.exit_code == 0 and json.loads(result.stdout)["sentences"] == 3


def test_skip_bad_reads_unindented_trees_as_the_strict_reader_does(tmp_path: Path) -> None:
    """Trees spread over lines without indentation: --skip-bad cut them at every line, counted the
    fragments that closed, "(NP (PRP I))", as sentences and skipped the rest, exit status 0."""
    path = tmp_path / "flat.mrg"
    path.write_text("(ROOT\n(S\n(NP (PRP I))\n(VP (VBD ran))))\n(ROOT\n(S\n(NP (PRP We))\n(VP (VBD sat))))\n")
    strict = [tree.words() for tree in read_trees(path)]
    words, report = _lenient(path)
    assert words == strict == [["I", "ran"], ["We", "sat"]] and report.skipped == 0


def test_skip_bad_loses_one_tree_for_a_byte_that_is_not_utf8(tmp_path: Path) -> None:
    """A byte that is not UTF-8 lost the rest of the file, as one skipped tree."""
    path = tmp_path / "latin1.mrg"
    path.write_bytes(f"{GOOD}\n".encode() + b"(ROOT (S (NP (NN caf\xe9))))\n" + f"{GOOD}\n{GOOD}\n".encode())
    words, report = _lenient(path)
    assert len(words) == 3 and report.skipped == 1
    assert report.first_errors is not None and report.first_errors[0].startswith(f"{path}:2:21: byte 0xE9")


def test_a_tree_left_open_is_named_where_the_next_tree_starts(tmp_path: Path) -> None:
    """A tree missing its last ')' took in the next "(ROOT": the strict error said "at end of file"; the
    lenient read lost the tree after it (or every tree after it)."""
    path = tmp_path / "open.mrg"
    path.write_text(f"{GOOD}\n(ROOT (S (NP (PRP We)) (VP (VBD sat)))\n  \n{GOOD}\n{GOOD}\n")
    assert _error(path) == f"{path}:2:1: unbalanced '(': tree is not closed before the next tree (line 4)"
    words, report = _lenient(path)
    assert len(words) == 3 and report.skipped == 1
    bare = tmp_path / "bare.mrg"  # the PTB's own wrapper
    bare.write_text("( (S (NP (PRP I)) (VP (VBD ran))) )\n( (S (NP (PRP We)) (VP (VBD sat)))\n"
                    "( (S (NP (PRP You)) (VP (VBD sat))) )\n")
    assert _error(bare) == f"{bare}:2:1: unbalanced '(': tree is not closed before the next tree (line 3)"
    words, report = _lenient(bare)
    assert words == [["I", "ran"], ["You", "sat"]] and report.skipped == 1


# ---------------------------------------------------------------- prepare: dev copies, refusals that say why


def test_a_dev_file_copied_from_a_training_file_is_warned_about(tmp_path: Path) -> None:
    """The same path in --train and --dev was warned about, a copy under another name not at all."""
    copy = tmp_path / "dev.ptb"
    copy.write_bytes(sample_path("train").read_bytes())
    summary = api.prepare(tmp_path / "run.sqlite", [sample_path("train")], [copy], tagger="perceptron",
                          tagger_iterations=1)
    assert summary.warnings == [f"warning: dev file {copy} has the same contents as training file "
                                f"{sample_path('train')}: dev scores (calibration, the best Θ̂) are then "
                                "measured on training sentences"]
    result = invoke_cli(["prepare", "--db", tmp_path / "cli.sqlite", "--train", sample_path("train"),
                         "--dev", copy, "--tagger", "perceptron", "--tagger-iterations", "1"])
    assert result.exit_code == 0 and summary.warnings[0] in result.stderr


def test_prepare_into_a_run_of_other_settings_says_which(prepared: Path) -> None:
    """"prepared from other inputs or settings" left the user to guess what differed."""
    from clparse.examples.prepare import PrepareSettings, prepare

    with pytest.raises(DatabaseError) as caught:
        prepare(prepared, [sample_path("train")], [sample_path("dev")],
                PrepareSettings(max_words=10, tagger_iterations=20, seed=3, constraints=False))
    assert "other inputs or settings (seed 0 (now 3); constraints on (now off));" in str(caught.value)
    with pytest.raises(DatabaseError) as caught:
        prepare(prepared, [sample_path("train")], [], PrepareSettings(max_words=10, tagger_iterations=20))
    assert f"(dev files {sample_path('dev')} (now none));" in str(caught.value)


def test_prepare_again_after_a_file_changed_says_which(tmp_path: Path) -> None:
    train = _sample_plus(tmp_path, "")
    db = tmp_path / "run.sqlite"
    _quick_prepare(db, [train])
    with train.open("a", encoding="utf-8") as handle:
        handle.write(GOOD + "\n")
    with pytest.raises(DatabaseError) as caught:
        _quick_prepare(db, [train])
    assert f"(train file {train} changed since (other contents));" in str(caught.value)


# ---------------------------------------------------------------- treebank preprocess -o, files given twice


def test_preprocess_output_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """A bad tree in the second file left -o truncated to the first file's trees (exit 1, the earlier
    output lost, a shorter treebank in its place)."""
    out = tmp_path / "out.ptb"
    out.write_text("precious\n")
    bad = tmp_path / "bad.mrg"
    bad.write_text(f"{GOOD}\n(ROOT (S (NP (PRP We) (VP (VBD sat))))\n{GOOD}\n")
    result = invoke_cli(["treebank", "preprocess", sample_path("dev"), bad, "-o", out])
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {bad}:2:1: unbalanced '('")
    assert out.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mrg", "out.ptb"]
    result = invoke_cli(["treebank", "preprocess", sample_path("dev"), "-o", out])
    assert result.exit_code == 0 and len(out.read_text().splitlines()) == 75


def test_a_treebank_file_given_twice_is_warned_about(tmp_path: Path) -> None:
    """`treebank stats gum/dev gum/dev/a.ptb` counted a.ptb twice without a word."""
    result = invoke_cli(["treebank", "stats", "--json", sample_path("dev"), sample_path("dev")])
    assert result.exit_code == 0 and json.loads(result.stdout)["sentences"] == 150
    assert f"warning: {sample_path('dev')} is given twice: its trees are read twice" in result.stderr


# ---------------------------------------------------------------- messages that say what to do


def test_a_glob_that_matched_nothing_is_said_so(tmp_path: Path) -> None:
    """The shell passes `gum/train/*.mrg` on as it is when nothing matches: "does not exist" left the user
    looking for a file named with a star."""
    pattern = tmp_path / "*.mrg"
    for args in (["prepare", "--db", tmp_path / "run.sqlite", "--train", pattern],
                 ["treebank", "stats", pattern]):
        result = invoke_cli(args)
        assert result.exit_code == 2 and result.stderr.strip().endswith(
            f"{pattern}: no such file or directory (no file matches the pattern)"), result.stderr
    assert not (tmp_path / "run.sqlite").exists()


def test_a_bracket_written_as_a_word_is_hinted_at(tmp_path: Path) -> None:
    path = tmp_path / "paren.mrg"
    path.write_text("(ROOT (S (NP (NN a)) (PRN (-LRB- () (NN b) (-RRB- ))) (VP (VBD ran))))\n")
    assert _error(path) == (f"{path}:1:34: empty tree '()' (a bracket written as a word? treebanks spell it "
                            "-LRB- / -RRB-)")


def test_skipping_raise_punctuation_says_how(tmp_path: Path) -> None:
    result = invoke_cli(["prepare", "--db", tmp_path / "run.sqlite", "--train", sample_path("train"),
                         "--skip-step", "raise_punctuation"])
    assert result.exit_code == 1 and "switch them off too (--no-constraints" in result.stderr
    assert not (tmp_path / "run.sqlite").exists()


def test_no_dev_sentence_left_says_why(tmp_path: Path) -> None:
    """Dev trees of empty elements alone, with --max-words 0: "at most None words ... or --max-words 0"."""
    empty = "(ROOT (S (NP-SBJ (-NONE- *)) (VP (-NONE- *T*))))\n"
    dev = tmp_path / "dev.mrg"
    dev.write_text(empty)
    db = tmp_path / "run.sqlite"
    with pytest.raises(ConfigurationError) as caught:
        _quick_prepare(db, [sample_path("train")], [dev], max_words=0)
    assert str(caught.value) == ("no dev sentence survived preprocessing and the length filter: of 1 trees, "
                                 "1 with no words left after preprocessing (empty elements alone, say)")
    dev.write_text(empty + "(ROOT (S (NP (NN a) (NN b) (NN c))))\n")
    with pytest.raises(ConfigurationError) as caught:
        _quick_prepare(db, [sample_path("train")], [dev], max_words=2)
    assert str(caught.value).endswith("of 2 trees, 1 over the length filter (at most 2 words) and 1 with no "
                                      "words left after preprocessing (empty elements alone, say); give "
                                      "--max-words 0 for every length")
    assert not db.exists()


def test_a_jackknifed_run_keeps_the_sentences_a_gold_tag_run_keeps(tmp_path: Path) -> None:
    """--max-words counted the tagger's tags in a jackknifed run: a 16-word sentence with a word tagged ':'
    passed --max-words 15, so the run held other sentences than a gold-tag run of the same settings."""
    from clparse.preprocess import sentence_length

    gold, jackknifed = tmp_path / "gold.sqlite", tmp_path / "jackknifed.sqlite"
    _quick_prepare(gold, [sample_path("train")])
    _quick_prepare(jackknifed, [sample_path("train")], train_tags="jackknife", folds=2,
                   fold_order="contiguous")
    query = "SELECT gold_tree FROM sentences WHERE split = 'train' ORDER BY position"
    kept = [tree for (tree,) in read_rows(jackknifed, query)]
    assert max(sentence_length(parse_tree(tree)) for tree in kept) <= 15
    assert kept == [tree for (tree,) in read_rows(gold, query)]


def test_a_gzipped_treebank_is_named_as_such(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "dev.ptb.gz"
    path.write_bytes(gzip.compress(sample_path("dev").read_bytes()))
    assert _error(path).endswith("binary data (NUL byte): not a treebank file (gzip-compressed: gunzip it "
                                 "first)")
    path.write_bytes(sample_path("dev").read_text(encoding="utf-8").encode("utf-16"))  # Notepad's "Unicode"
    assert _error(path).endswith("not a treebank file (UTF-16 text: save it as UTF-8)")


def test_dev_files_holding_training_trees_are_warned_about(tmp_path: Path) -> None:
    """A dev file made of training trees (a split made twice, a training file pasted in) went unsaid."""
    train = [format_tree(tree) for tree in read_trees(sample_path("train"))]
    dev = [format_tree(tree) for tree in read_trees(sample_path("dev"))]
    mixed = tmp_path / "dev.mrg"
    mixed.write_text("\n".join(dev[:10] + train[:90]) + "\n")
    summary = api.prepare(tmp_path / "run.sqlite", [sample_path("train")], [mixed], tagger="perceptron",
                          tagger_iterations=1)
    assert summary.warnings == ["warning: 32 of 37 dev sentences are also training sentences (the same "
                                "tree): dev scores (calibration, the best Θ̂) are then measured mostly on "
                                "training sentences"]
    honest = api.prepare(tmp_path / "honest.sqlite", [sample_path("train")], [sample_path("dev")],
                         tagger="perceptron", tagger_iterations=1)
    assert honest.warnings == []


def test_a_directory_of_sections_names_them(tmp_path: Path) -> None:
    """The PTB's layout (wsj/00 ... wsj/24): "directory holds no treebank file" left the user guessing."""
    section = tmp_path / "wsj" / "02"
    section.mkdir(parents=True)
    (section / "wsj_0201.mrg").write_text(GOOD + "\n")
    result = invoke_cli(["treebank", "stats", tmp_path / "wsj"])
    assert result.exit_code == 2 and result.stderr.strip().endswith(
        f"{tmp_path / 'wsj'}: directory holds no treebank file (*.ptb or *.mrg); its subdirectories do: give "
        f"them, such as {tmp_path / 'wsj' / '*'}")
