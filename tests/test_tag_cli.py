"""`clparse tag`: tokens in, word/TAG out, and `--eval` against gold trees (issue #12, item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clparse.data import sample_path
from clparse.read import read_trees
from clparse.tag.evaluate import evaluate_tagger
from clparse.tag.stored import load_tagger

CLPARSE = str(Path(sys.executable).with_name("clparse"))


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLPARSE, *args], input=stdin, capture_output=True, text=True, timeout=120,
                          check=False)


def test_tag_keeps_lines_and_tokens(trained_db: Path) -> None:
    result = run("tag", "--db", str(trained_db), stdin="The dog barked .\n\nShe sleeps\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and lines[1] == ""
    tagger = load_tagger(trained_db)
    assert tagger is not None
    words = ["The", "dog", "barked", "."]
    assert lines[0] == " ".join(f"{w}/{t}" for w, t in zip(words, tagger.tag(words)))
    assert [token.rsplit("/", 1)[0] for token in lines[2].split()] == ["She", "sleeps"]


def test_tag_eval_reports_accuracy_and_confusions(trained_db: Path) -> None:
    result = run("tag", "--db", str(trained_db), "--eval", str(sample_path("dev")), "--json", "--top", "3")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    gold = [[(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
            for tree in read_trees(sample_path("dev"))]
    tagger = load_tagger(trained_db)
    assert tagger is not None
    assert report["tokens"] == sum(map(len, gold)) and report["sentences"] == len(gold)
    assert abs(report["accuracy"] - 100 * tagger.accuracy(gold)) < 1e-9
    assert len(report["confusions"]) == 3 \
        and report["confusions"][0]["count"] >= report["confusions"][2]["count"]
    text = run("tag", "--db", str(trained_db), "--eval", str(sample_path("dev"))).stdout
    assert f"{report['accuracy']:.2f} % tagged as in the gold trees" in text


class Fixed:
    """Tags every word NN."""

    def tag(self, words: list[str]) -> list[str]:
        return ["NN"] * len(words)


def test_evaluate_tagger_by_hand() -> None:
    report = evaluate_tagger(Fixed(), [[("a", "DT"), ("dog", "NN")], [], [("runs", "VBZ"), ("cats", "NN")]])
    assert (report.sentences, report.tokens, report.correct) == (2, 4, 2)
    assert report.accuracy == 50.0
    assert report.confusions == {("DT", "NN"): 1, ("VBZ", "NN"): 1}
