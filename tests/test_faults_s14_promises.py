"""Faults found by checking what README's "Commands" and the docs it links promise against what the command
line does (a helper's hunt, 2026-11-27)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import invoke_cli

THETA = "3"  # trained_db is trained to Θ < 3 for every label


def explained_tokens(db: Path, *words: str) -> list[str]:
    result = invoke_cli(["explain", "--db", db, "--theta", THETA, "--top", "0", "--json", *words])
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout.splitlines()[0])["tokens"])


def test_explain_keeps_a_double_dash_token(trained_db: Path) -> None:
    """Before: click took the `--` between the words for the end of the options and dropped it: the
    sentence explained was "Dogs bark really ." with exit status 0."""
    words = ["Dogs", "bark", "--", "really", "."]
    assert explained_tokens(trained_db, *words) == words


def test_explain_takes_tokens_that_begin_with_a_dash(trained_db: Path) -> None:
    """Before: `-LRB-` (how the docs spell a bracket) and `-5` were read as options: "No such option '-L'",
    exit status 2."""
    assert explained_tokens(trained_db, "-LRB-", "Dogs", "-RRB-", "bark", "-5", ".") == [
        "-LRB-", "Dogs", "-RRB-", "bark", "-5", "."]


def test_explain_still_reads_its_options_and_names_a_typo(trained_db: Path) -> None:
    # options after the words, --opt=value, and `--` before the words still mean what they meant
    assert explained_tokens(trained_db, "The", "dog", ".", "--top=1") == ["The", "dog", "."]
    assert explained_tokens(trained_db, "--", "--x", "dog") == ["--x", "dog"]
    typo = invoke_cli(["explain", "--db", trained_db, "--theta", THETA, "--jsn", "The", "dog"])
    assert typo.exit_code == 2 and "No such option '--jsn'" in typo.stderr


def test_calibrate_announces_each_theta_once_in_the_order_it_parses_them(db_copy: Path) -> None:
    """Before: `--thetas 4,5,4` said "calibrating at 3 Θ̂ value(s): 4, 5, 4" and parsed 5, then 4."""
    result = invoke_cli(["calibrate", "--db", db_copy, "--beam", "1", "--thetas", "4,5,4"])
    assert result.exit_code == 0, result.stderr
    assert "calibrating at 2 Θ̂ value(s): 5, 4\n" in result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()[2:4]] == ["5", "4"]


def test_combine_refuses_a_beam_or_kbest_past_the_search_limit_as_a_usage_error(tmp_path: Path,
                                                                                 trained_db: Path) -> None:
    """Before: "Error: beam, max_pops and kbest must be at most 2,147,483,647" once the members had loaded,
    naming no option, exit status 1 (README: a bad option is a usage error naming it, exit status 2)."""
    from clparse.data import sample_path

    for option in ("--beam", "--kbest"):
        result = invoke_cli(["combine", "--member", trained_db, "--dev", sample_path("dev"), option,
                             str(2**31), "-o", tmp_path / "combo.sqlite"])
        assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.stderr, result.stderr
    assert not (tmp_path / "combo.sqlite").exists()


def test_treebank_stats_json_refuses_bucket_it_would_ignore() -> None:
    """Before: `treebank stats --json --bucket 10` printed the histogram per length, --bucket ignored in
    silence (exit status 0)."""
    from clparse.data import sample_path

    result = invoke_cli(["treebank", "stats", sample_path("dev"), "--json", "--bucket", "10"])
    assert result.exit_code == 2 and "--bucket groups the table's length histogram" in result.stderr
    assert invoke_cli(["treebank", "stats", sample_path("dev"), "--bucket", "10"]).exit_code == 0
    assert invoke_cli(["treebank", "stats", sample_path("dev"), "--json"]).exit_code == 0
