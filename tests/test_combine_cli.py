"""`clparse combine` and `parse --db COMBO`, and `parse --constraints`, end to end on the trained sample:
the stored dev F1 is what parsing the dev set with the stored combination scores, one member with K = 1
parses as that member, the combination is plain SQL, and known brackets are kept (or refused in one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse.cli import main
from clparse.combine.run import MemberSpec, fit_members
from clparse.data import sample_path
from clparse.evaluate import evaluate
from clparse.read import format_tree, parse_tree, read_trees


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def dev_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dev") / "dev.ptb"
    path.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("dev")))[:12]),
                    encoding="utf-8")
    return path


def test_combine_stores_a_combination_that_parses_to_its_dev_f1(trained_db: Path, dev_file: Path,
                                                               tmp_path: Path) -> None:
    combo = tmp_path / "combo.sqlite"
    code, out, err = run("combine", "--member", f"{trained_db}@3", "--member", f"{trained_db}@8",
                         "--dev", str(dev_file), "--kbest", "3", "--beam", "20", "--max-evaluations", "20",
                         "--out", str(combo))
    assert code == 0, err
    assert "combination: dev F1" in out
    code, rows, err = run("sql", "--db", str(combo), "--json",
                          "SELECT c.dev_f1, c.k, c.beam, m.position, m.theta, m.weight FROM combinations c "
                          "JOIN combination_members m ON m.combination_id = c.id ORDER BY m.position")
    assert code == 0, err
    members = json.loads(rows)
    assert [(m["position"], m["theta"], m["k"], m["beam"]) for m in members] == [(0, "3", 3, 20),
                                                                                (1, "8", 3, 20)]
    assert all(m["weight"] > 0 for m in members)
    code, parsed, err = run("parse", "--db", str(combo), "--input-format", "ptb", str(dev_file))
    assert code == 0, err
    assert "combination of 2 parsers" in err
    f1 = evaluate(read_trees(dev_file), [parse_tree(line) for line in parsed.splitlines()]).all.f1
    assert f1 == pytest.approx(members[0]["dev_f1"], abs=1e-9)
    # a combination parses with its members' stored Θ̂ and in one process
    assert run("parse", "--db", str(combo), "--theta", "5", input="The dog barked .\n")[0] == 2
    assert run("parse", "--db", str(combo), "--jobs", "2", input="The dog barked .\n")[0] == 2


def test_one_member_with_one_tree_parses_as_that_member(trained_db: Path, dev_file: Path,
                                                        tmp_path: Path) -> None:
    combo = tmp_path / "one.sqlite"
    fit_members([MemberSpec("clparse", trained_db, "3")], [dev_file], combo, k=1, beam=20, max_evaluations=10,
                progress=False)
    alone = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--input-format", "ptb",
                str(dev_file))
    combined = run("parse", "--db", str(combo), "--input-format", "ptb", str(dev_file))
    assert alone[0] == combined[0] == 0
    assert combined[1] == alone[1]


def test_combine_refuses_a_training_run_as_its_output(trained_db: Path, dev_file: Path,
                                                      db_copy: Path) -> None:
    code, _, err = run("combine", "--member", f"{trained_db}@3", "--dev", str(dev_file), "--out",
                       str(db_copy))
    assert code == 1 and "holds a training run" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("combine", "--member", f"{trained_db}@x", "--dev", str(dev_file), "--out", "o.sqlite")
    assert code == 2 and "must be a number or best" in err


# ------------------------------------------------------------------------------------- parse --constraints


def test_constraints_are_kept_and_a_complete_bracketing_returns_its_tree(trained_db: Path, dev_file: Path,
                                                                        tmp_path: Path) -> None:
    """Each sentence's own free parse, given back as a complete bracketing, is returned; a required
    bracket the free parse lacks appears in the constrained one."""
    code, free, err = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--input-format",
                          "ptb", str(dev_file))
    assert code == 0, err
    trees = [parse_tree(line) for line in free.splitlines()]
    lines = []
    for tree in trees:
        spans = [[s, e, label] for s, e, label in tree.labeled_spans() if label != "ROOT"]
        lines.append(json.dumps({"require": spans, "complete": True}))
    constraints = tmp_path / "c.jsonl"
    constraints.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, bound, err = run("parse", "--db", str(trained_db), "--theta", "3", "--beam", "20", "--input-format",
                           "ptb", "--constraints", str(constraints), str(dev_file))
    assert code == 0, err
    assert evaluate(trees, [parse_tree(line) for line in bound.splitlines()]).all.f1 == 100.0
    # a bracket the free parse of "The dog barked ." lacks
    sentence = "The old dog barked at the cat .\n"
    plain = parse_tree(run("parse", "--db", str(trained_db), "--theta", "3", input=sentence)[1])
    wanted = next(([s, s + 2] for s in range(5) if all((a, b) != (s, s + 2) for a, b, _ in
                                                         plain.labeled_spans())), None)
    assert wanted is not None
    constraints.write_text(json.dumps({"require": [wanted + ["NP"]]}) + "\n", encoding="utf-8")
    code, out, err = run("parse", "--db", str(trained_db), "--theta", "3", "--constraints", str(constraints),
                         input=sentence)
    assert code == 0, err
    assert (wanted[0], wanted[1], "NP") in parse_tree(out).labeled_spans()


@pytest.mark.parametrize("lines,sentences,message", [
    (['{"require": [[0, 2], [1, 3]]}'], 1, "c.jsonl:1: sentence 1: required brackets"),
    (['{}', '{"forbid": [[0, 9]]}'], 2, "c.jsonl:2: sentence 2: bracket * 0:9 is not a span"),
    (['{}'], 2, "1 line(s) for more sentences"),
    (['{}', '{}'], 1, "more lines of constraints than sentences"),
    (['{"require": [[0, 1, "XYZ"]]}'], 1, "no label 'XYZ'"),
    (['{"require": [[3, 4]]}'], 1, "holds only tokens the parser sets aside"),
    (['{"require": 3}'], 1, "c.jsonl:1: 'require' must be a list"),
])
def test_constraints_that_cannot_hold_are_one_error_line(trained_db: Path, tmp_path: Path, lines: list[str],
                                                        sentences: int, message: str) -> None:
    constraints = tmp_path / "c.jsonl"
    constraints.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run("parse", "--db", str(trained_db), "--theta", "3", "--constraints", str(constraints),
                       input="The dog barked .\n" * sentences)
    assert code == 1, err
    error = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and message in error[0], err
