"""`parse` and `tag` on a database of `clparse combine`: a search option the combination was not fitted
with is refused in one line (it was dropped, or passed on, in silence), and `tag` tags with the lead
member's tagger, as `parse` does for untagged input (it said "no tagger; run prepare again")."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.errors import ParameterError


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def combo(two_theta_combo: Path) -> Path:
    return two_theta_combo


@pytest.mark.parametrize(("option", "value", "named"), [("--beam", "50", "--beam"),
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
    honoured = run("parse", "--db", str(combo), "--beam", "20", "--tag-alternatives", "3", "--aggregator",
                   "sum", input="The dog barked .\n")
    assert honoured[0] == 0, honoured[2]
    assert honoured[1] == plain[1]


def test_api_refuses_the_same(combo: Path) -> None:
    for search in ({"beam": 50}, {"aggregator": "maxmin"}, {"tag_alternatives": -1}):
        with pytest.raises(ParameterError) as caught:
            api.open_parser(combo, **search)  # type: ignore[arg-type]
        assert caught.value.parameter == next(iter(search))


def test_tag_uses_the_lead_members_tagger_as_parse_does(combo: Path, trained_db: Path) -> None:
    code, out, err = run("tag", "--db", str(combo), input="The dog barked .\n")
    assert code == 0, err
    assert out == run("tag", "--db", str(trained_db), input="The dog barked .\n")[1]
    parser = api.open_parser(combo)
    assert out.split() == [f"{w}/{t}" for w, t in parser.tag(["The", "dog", "barked", "."])]  # type: ignore[attr-defined]
