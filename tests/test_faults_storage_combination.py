"""Faults a reviewer found in `clparse combine` and in the commands given a combination's database, as a
user, one test each (each failed before its fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.combine.run import MemberSpec, fit_members
from clparse.data import sample_path
from clparse.errors import ConfigurationError
from tests.conftest import invoke_cli


@pytest.fixture(scope="module")
def combo(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("combo") / "combo.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [sample_path("dev")], out, k=1, beam=5,
                max_evaluations=10, progress=False)
    return out


@pytest.mark.parametrize("command", [["status"], ["report"], ["export", "-o", "{tmp}/parser.sqlite"],
                                     ["report", "--plot", "{tmp}/figure.png"]])
def test_a_combination_database_is_called_one(combo: Path, trained_db: Path, tmp_path: Path,
                                               command: list[str]) -> None:
    # status and export said "run `clparse prepare --db COMBO ...` first" and report "run `clparse
    # calibrate`", advice that fails on a combination; now they say what the file is and name its member
    args = [a.format(tmp=tmp_path) for a in command]
    result = invoke_cli([args[0], "--db", combo, *args[1:]])
    assert result.exit_code == 1, result.output
    error = result.stderr.strip()
    assert len(error.splitlines()) == 1
    assert "combination" in error and str(trained_db.resolve()) in error, error
    assert "prepare" not in error and "calibrate" not in error
    assert list(tmp_path.iterdir()) == []


def test_a_combination_as_a_member_is_called_one(combo: Path, tmp_path: Path) -> None:
    # combine --member COMBO said "not calibrated yet; run `clparse calibrate --db COMBO`"
    result = invoke_cli(["combine", "--member", combo, "--dev", sample_path("dev"),
                         "-o", tmp_path / "c.sqlite"])
    assert result.exit_code == 1, result.output
    assert "combination" in result.stderr and "calibrate" not in result.stderr, result.stderr
    assert not (tmp_path / "c.sqlite").exists()


def test_a_ptb_member_of_every_dev_sentence_serves_with_max_words(trained_db: Path, tmp_path: Path) -> None:
    # --max-words 15 with --ptb-member holding another parser's trees of the whole dev file was refused as
    # "75 trees for 20 dev sentences"; the parses of the kept sentences are taken from it now
    from clparse.read import read_trees
    from clparse.preprocess import sentence_length

    gold = list(read_trees(sample_path("dev")))
    kept = [t for t in gold if sentence_length(t) <= 15]
    assert len(kept) < len(gold)
    report = fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("ptb", sample_path("dev"))],
                         [sample_path("dev")], tmp_path / "c.sqlite", k=1, beam=5, max_words=15,
                         max_evaluations=10, progress=False)
    assert report.sentences == len(kept)
    assert report.member_f1[1] == 100.0  # the gold trees of the kept sentences, each against itself


def test_a_wrong_ptb_member_is_told_before_the_members_parse(trained_db: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # its tree count was checked only after every clparse member had parsed the dev set
    from clparse.combine import run

    def never(*_: object, **__: object) -> None:
        raise AssertionError("a member was opened before the ptb member was checked")

    monkeypatch.setattr(run, "open_member", never)
    wrong = tmp_path / "wrong.ptb"
    wrong.write_text("(ROOT (NP (DT The) (NN dog)))\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="1 trees for 20 dev sentences .of 75 in the --dev files."):
        fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("ptb", wrong)], [sample_path("dev")],
                    tmp_path / "c.sqlite", k=1, beam=5, max_words=15, progress=False)


def test_a_member_that_cannot_parse_is_told_before_the_others_parse(trained_db: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # the second member's Θ̂ (trained only down to 3) was refused after the first had parsed the dev set
    from clparse.combine import run

    def never(*_: object, **__: object) -> None:
        raise AssertionError("a member parsed before every member was opened")

    monkeypatch.setattr(run, "member_lists", never)
    with pytest.raises(ConfigurationError, match="not every label is trained past"):
        fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("clparse", trained_db, "0.001")],
                    [sample_path("dev")], tmp_path / "c.sqlite", k=1, beam=5, progress=False)
    assert not (tmp_path / "c.sqlite").exists()


def test_an_output_that_cannot_be_written_is_told_before_the_fit(trained_db: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # -o /proc/c.sqlite failed after the whole fit, as "the database: database error: ... .creating"
    from clparse.combine import run

    def never(*_: object, **__: object) -> None:
        raise AssertionError("a member was opened before the output was checked")

    monkeypatch.setattr(run, "open_member", never)
    with pytest.raises(ConfigurationError, match="/proc/c.sqlite: cannot write a database in /proc"):
        fit_members([MemberSpec("clparse", trained_db, "3")], [sample_path("dev")], Path("/proc/c.sqlite"),
                    k=1, beam=5, progress=False)
