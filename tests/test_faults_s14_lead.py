"""Faults the lead fixed from a helper's notes (2026-11-27): the Python API's theta and input format,
and the tagging report's confusion count."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from clparse import api
from clparse.errors import ParameterError
from clparse.tag.evaluate import TaggingReport


def test_a_numpy_theta_opens_the_parser_of_its_value(trained_db: Path) -> None:
    # numpy.float32 (no float subclass) was refused: "give a finite number > 0 or 'best'"
    sentence = ["The", "dog", "barked", "."]
    expected = str(api.open_parser(trained_db, 4.0, beam=4).parse(sentence))
    for theta in (np.float32(4.0), np.float64(4.0), np.int64(4)):
        assert str(api.open_parser(trained_db, theta, beam=4).parse(sentence)) == expected


def test_a_boolean_theta_is_refused(trained_db: Path) -> None:
    # True is an int to Python: the first check lets no bool through now (the parser's own check refused it)
    with pytest.raises(ParameterError, match="theta"):
        api.open_parser(trained_db, True)


def test_an_unknown_input_format_is_refused_before_the_model_loads(tmp_path: Path) -> None:
    # it was a ClparseError, once the model had loaded: here no database exists at all, and the
    # input format is still what is named
    with pytest.raises(ParameterError, match="input_format"):
        list(api.parse(tmp_path / "none.sqlite", ["-"], "tokenz"))


@pytest.mark.parametrize("top", [-1, 1.5, True])
def test_a_confusion_count_below_zero_or_not_whole_is_refused(top: object) -> None:
    # most_common(-1) listed every confusion but the rarest, in silence
    report = TaggingReport(sentences=1, tokens=4, correct=2, confusions=Counter({("NN", "VB"): 1,
                                                                                 ("DT", "IN"): 1}))
    with pytest.raises(ParameterError, match="top"):
        report.format(top)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="top"):
        report.to_dict(top)  # type: ignore[arg-type]


def test_top_zero_prints_no_table_header() -> None:
    report = TaggingReport(sentences=1, tokens=4, correct=3, confusions=Counter({("NN", "VB"): 1}))
    assert report.format(0).splitlines() == [report.format(0).splitlines()[0]]
    assert "gold" in report.format(1) and report.to_dict(0)["confusions"] == []


@pytest.mark.parametrize("brackets", [{"required": [(0, 2, "NP")]}, [(0, 2, "NP")]])
def test_brackets_of_another_type_are_one_parameter_error(trained_db: Path, brackets: object) -> None:
    # a dict or a list raised AttributeError from inside the parse
    parser = api.open_parser(trained_db, 4.0, beam=4)
    with pytest.raises(ParameterError, match="brackets"):
        parser.parse(["The", "dog", "barked", "."], brackets)  # type: ignore[arg-type]


def test_tag_eval_of_a_glob_says_how_to_give_several_gold_files(trained_db: Path, tmp_path: Path) -> None:
    # `tag --eval gum/dev/*.ptb` said only "give FILES or --eval, not both": the shell had made every gold
    # file after the first one of FILES
    from click.testing import CliRunner

    from clparse.cli import main

    tree = "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))\n"
    for name in ("a.ptb", "b.ptb"):
        (tmp_path / name).write_text(tree, encoding="utf-8")
    result = CliRunner().invoke(main, ["tag", "--db", str(trained_db), "--eval", str(tmp_path / "a.ptb"),
                                       str(tmp_path / "b.ptb")])
    assert result.exit_code == 2
    assert "--eval before each file" in result.stderr and "their folder" in result.stderr
    both = CliRunner().invoke(main, ["tag", "--db", str(trained_db), "--eval", str(tmp_path / "a.ptb"),
                                     "--eval", str(tmp_path / "b.ptb")])
    assert both.exit_code == 0, both.stderr
    assert "2 sentences" in both.stdout
