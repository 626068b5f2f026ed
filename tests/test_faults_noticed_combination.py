"""`parse` and `tag` on a database of `clparse combine`: a search option the combination was not fitted
with is refused in one line (it was dropped, or passed on, in silence), and `tag` tags with the lead
member's tagger, as `parse` does for untagged input (it said "no tagger; run prepare again")."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.combine.run import MemberSpec, fit_members
from clparse.data import sample_path
from clparse.errors import ParameterError
from clparse.read import format_tree, read_trees


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def combo(trained_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("combo")
    dev = folder / "dev.ptb"
    dev.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:6]),
                   encoding="utf-8")
    path = folder / "combo.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3"), MemberSpec("clparse", trained_db, "8")], [dev],
                path, k=2, beam=20, max_evaluations=10, progress=False)
    return path


@pytest.mark.parametrize(("option", "value", "named"), [("--beam", "50", "--beam"),
                                                        ("--tag-alternatives", "2", "--tag-alternatives"),
                                                        ("--aggregator", "maxmin", "--aggregator")])
def test_parse_refuses_a_search_the_combination_was_not_fitted_with(combo: Path, option: str, value: str,
                                                                    named: str) -> None:
    code, out, err = run("parse", "--db", str(combo), option, value, input="The dog barked .\n")
    assert code != 0 and out == ""
    assert named in err and "combination" in err
    assert "Traceback" not in err


def test_parse_takes_what_the_combination_can_honour(combo: Path) -> None:
    plain = run("parse", "--db", str(combo), input="The dog barked .\n")
    assert plain[0] == 0, plain[2]
    honoured = run("parse", "--db", str(combo), "--beam", "20", "--tag-alternatives", "0", "--aggregator",
                   "sum", input="The dog barked .\n")
    assert honoured[0] == 0, honoured[2]
    assert honoured[1] == plain[1]


def test_api_refuses_the_same(combo: Path) -> None:
    for search in ({"beam": 50}, {"tag_alternatives": 3}, {"aggregator": "maxmin"}):
        with pytest.raises(ParameterError) as caught:
            api.open_parser(combo, **search)  # type: ignore[arg-type]
        assert caught.value.parameter == next(iter(search))


def test_tag_uses_the_lead_members_tagger_as_parse_does(combo: Path, trained_db: Path) -> None:
    code, out, err = run("tag", "--db", str(combo), input="The dog barked .\n")
    assert code == 0, err
    assert out == run("tag", "--db", str(trained_db), input="The dog barked .\n")[1]
    parser = api.open_parser(combo)
    assert out.split() == [f"{w}/{t}" for w, t in parser.tag(["The", "dog", "barked", "."])]  # type: ignore[attr-defined]
