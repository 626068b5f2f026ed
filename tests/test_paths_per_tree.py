"""``prepare --paths N``: N seeded random bottom-up paths per training tree, their examples pooled.

Path 0 is the one path a run with one path per tree walks, so ``--paths 1`` (the default) gives the
same examples as before the option existed; every other path is checked against an independent count
of the candidates along it (:func:`clparse.features.state.candidates` over the replayed states).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from clparse import api
from clparse.errors import ClparseError, ParameterError
from clparse.examples.data import TrainingData
from clparse.examples.generate import ExampleGenerator, item_to_tree, random_path, replay
from clparse.features.space import FeatureConfig
from clparse.features.state import build, candidates, leaf_items
from clparse.read import Tree, parse_tree
from tests.conftest import invoke_cli

TREE = parse_tree("(ROOT (S (NP (DT a) (NN b)) (VP (VBD c) (NP (DT d) (NN e)) (PP (IN f) (NP (NN g))))))")
LABELS = ["NP", "PP", "ROOT", "S", "VP"]


def examples(generator: ExampleGenerator) -> dict[str, set[tuple[int, int, int]]]:
    return {label: set(zip(*(a.tolist() for a in generator.examples.deduplicated(label))))
            for label in generator.labels}


def candidate_counts(tree: Tree, path: list[tuple[int, int, str]], labels: list[str]) -> Counter[str]:
    """Candidates per label over the states of ``path``, counted without the example kernel."""
    frontier = leaf_items(tree.tagged_words())
    counts: Counter[str] = Counter()
    for start, end, label in path:
        counts.update(c.label for c in candidates(frontier, labels, max_children=5))
        first = next(i for i, item in enumerate(frontier) if item.start == start)
        last = next(i for i, item in enumerate(frontier) if item.end == end)
        frontier[first:last + 1] = [build(label, frontier[first:last + 1])]
    return counts


def test_one_path_is_the_path_and_examples_of_before() -> None:
    one, default = (ExampleGenerator(LABELS, FeatureConfig(), seed=3, paths=1),
                    ExampleGenerator(LABELS, FeatureConfig(), seed=3))
    assert one.add_sentence(TREE, 0) == default.add_sentence(TREE, 0) == random_path(TREE, 3, 0)
    for label in LABELS:
        assert all(np.array_equal(a, b) for a, b in zip(one.examples.deduplicated(label),
                                                        default.examples.deduplicated(label)))


def test_more_paths_add_examples_and_keep_the_first_paths() -> None:
    one = ExampleGenerator(LABELS, FeatureConfig(), seed=3)
    three = ExampleGenerator(LABELS, FeatureConfig(), seed=3, paths=3)
    first = one.add_sentence(TREE, 0)
    steps = three.add_sentence(TREE, 0)
    size = len(first)
    paths = [steps[i * size:(i + 1) * size] for i in range(3)]
    assert len(steps) == 3 * size and paths[0] == first
    assert paths == [random_path(TREE, 3, 0, number=n) for n in range(3)]
    assert len({tuple(random_path(TREE, 3, 0, number=n)) for n in range(10)}) > 1  # they do differ
    # row ids are given in order of discovery, and path 0 comes first: its examples keep their ids
    small, large = examples(one), examples(three)
    for label in LABELS:
        for row, y, count in small[label]:
            assert any(r == row and v == y and c >= count for r, v, c in large[label])
    three.finish()
    expected = sum((candidate_counts(TREE, p, LABELS) for p in paths), Counter())
    assert three.report.candidates == dict(expected)
    assert three.report.sentences == three.report.used == 1


def test_paths_need_the_random_order() -> None:
    with pytest.raises(ValueError, match="random order"):
        ExampleGenerator(LABELS, FeatureConfig(), order="l2r", paths=2)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from clparse.data import sample_path

    folder = tmp_path_factory.mktemp("paths")
    runs = []
    for paths in (1, 2):
        db = folder / f"paths{paths}.sqlite"
        api.prepare(db, [sample_path("train")], [sample_path("dev")], max_words=10, tagger_iterations=5,
                    paths=paths)
        runs.append(db)
    return runs[0], runs[1]


def test_a_run_with_two_paths_stores_both_and_more_examples(two_runs: tuple[Path, Path]) -> None:
    one, two = TrainingData(two_runs[0]), TrainingData(two_runs[1])
    assert one.config["settings"]["paths"] == 1 and two.config["settings"]["paths"] == 2
    differ = 0
    for a, b in zip(one.sentences("train"), two.sentences("train"), strict=True):
        assert a.trained == b.trained and len(b.paths) == (2 if b.trained else 0)
        if b.trained:
            assert b.path == b.paths[0] == a.path and a.paths == [a.path]
            differ += b.paths[1] != b.paths[0]
            for path in b.paths:
                assert item_to_tree(replay(b.tree.tagged_words(), path), b.tree.words()) == b.tree
    assert differ > 0
    rows = {db: dict(api_rows(db)) for db in two_runs}
    for label, (candidates_one, examples_one) in rows[two_runs[0]].items():
        candidates_two, examples_two = rows[two_runs[1]][label]
        assert candidates_two > candidates_one and examples_two >= examples_one


def api_rows(db: Path) -> list[tuple[str, tuple[int, int]]]:
    import json

    found = json.loads(api.sql(db, "SELECT name, candidates, examples FROM labels", fmt="json"))
    return [(r["name"], (r["candidates"], r["examples"])) for r in found]


def test_preparing_again_with_other_paths_is_refused_naming_them(two_runs: tuple[Path, Path]) -> None:
    from clparse.data import sample_path

    with pytest.raises(ClparseError, match=r"paths 1 \(now 3\)"):
        api.prepare(two_runs[0], [sample_path("train")], [sample_path("dev")], max_words=10,
                    tagger_iterations=5, paths=3)
    again = api.prepare(two_runs[1], [sample_path("train")], [sample_path("dev")], max_words=10,
                        tagger_iterations=5, paths=2)
    assert not again.created  # the same inputs: nothing to do


def test_bad_paths_are_one_clear_error(tmp_path: Path) -> None:
    from clparse.data import sample_path

    for value in (0, None, 1.5):  # None was a TypeError from a comparison inside
        with pytest.raises(ParameterError, match="paths"):
            api.prepare(tmp_path / "x.sqlite", [sample_path("train")], paths=value)  # type: ignore[arg-type]
    for name in ("jobs", "max_children", "context", "vocab_min", "folds"):
        with pytest.raises(ParameterError, match=name):
            api.prepare(tmp_path / "x.sqlite", [sample_path("train")], **{name: None})
    assert not (tmp_path / "x.sqlite").exists()
    result = invoke_cli(["prepare", "--db", tmp_path / "y.sqlite", "--train", sample_path("train"),
                         "--order", "l2r", "--paths", "2"])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == ("Error: the l2r order has one path per tree; more than "
                                                     "one path needs the random order")
    assert not (tmp_path / "y.sqlite").exists()
