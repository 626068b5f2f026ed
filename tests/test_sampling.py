"""Priority-sampled split search (``train --sample N``): the estimator, the refit leaves, and resume.

* the sample is the top-N priorities w/u, carried weights max(w, τ) (checked against a sort);
* the carried weights estimate any subset's weight without bias (Monte Carlo over 3,000 seeded draws);
* a tree grown on a sample gets every leaf's W± and κ from *all* examples (brute-force routing);
* training with sampling, paused or SIGKILLed and resumed, ends byte-identical to an uninterrupted run;
* the stratified sample (issue 27) keeps a rare label's positives, and a sample that finds no split does
  not end the label (the first version "converged" RRC on all of GUM with no tree at all).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from clparse.boost.booster import Booster, BoostSettings
from clparse.boost.sampling import priority_sample, stratified_sample, take_rows
from clparse.boost.tree import confidence, grow_tree, refit
from clparse.errors import ConfigurationError
from tests.conftest import read_rows

REPO = Path(__file__).resolve().parents[1]


def test_the_sample_is_the_top_priorities_with_weights_raised_to_the_threshold() -> None:
    weights = np.array([4.0, 1.0, 2.0, 3.0, 0.5, 2.5, 0.1])
    kept, carried = priority_sample(weights, 3, seed=5, iteration=9)
    uniform = 1.0 - np.random.default_rng([5, 9]).random(len(weights))
    ranked = sorted(range(len(weights)), key=lambda i: -weights[i] / uniform[i])
    threshold = weights[ranked[3]] / uniform[ranked[3]]
    assert kept.tolist() == sorted(ranked[:3])
    assert carried.tolist() == [max(weights[i], threshold) for i in sorted(ranked[:3])]
    everything, same = priority_sample(weights, 7, seed=5, iteration=9)
    assert everything.tolist() == list(range(7)) and same.tolist() == weights.tolist()


def test_carried_weights_estimate_subset_sums_without_bias() -> None:
    rng = np.random.default_rng(3)
    weights = rng.exponential(1.0, 60) ** 2  # skewed, as boosting weights are
    subset = rng.random(60) < 0.3
    estimates = []
    for iteration in range(3000):
        kept, carried = priority_sample(weights, 12, seed=1, iteration=iteration)
        estimates.append(float(carried[subset[kept]].sum()))
    mean, error = np.mean(estimates), np.std(estimates) / np.sqrt(len(estimates))
    assert abs(mean - weights[subset].sum()) < 4 * error
    assert np.std(estimates) > 0  # a real sample, not the whole set


def test_take_rows_gathers_csr_rows() -> None:
    indptr = np.array([0, 2, 2, 5, 6], dtype=np.int64)
    indices = np.array([1, 4, 0, 2, 3, 7], dtype=np.int32)
    sub_indptr, sub_indices = take_rows(indptr, indices, np.array([3, 0, 1, 2]))
    assert sub_indptr.tolist() == [0, 1, 3, 3, 6] and sub_indices.tolist() == [7, 1, 4, 0, 2, 3]


def random_problem(seed: int, n: int = 400, features: int = 30) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    rows = [np.sort(rng.choice(features, rng.integers(1, 8), replace=False)) for _ in range(n)]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.concatenate(rows).astype(np.int32)
    y = np.where(rng.random(n) < 0.3 + 0.4 * np.isin(np.arange(n) % 7, (1, 2)), 1, -1).astype(np.int8)
    multiplicity = rng.integers(1, 4, n).astype(np.float64)
    return indptr, indices, y, multiplicity


def test_a_tree_grown_on_a_sample_gets_its_leaves_from_every_example() -> None:
    indptr, indices, y, multiplicity = random_problem(11)
    positive = y > 0
    weights = multiplicity * np.random.default_rng(2).uniform(0.2, 1.0, len(y))
    kept, carried = priority_sample(weights, 60, seed=0, iteration=1)
    sub_indptr, sub_indices = take_rows(indptr, indices, kept)
    grown = grow_tree(sub_indptr, sub_indices, 30, positive[kept], carried, multiplicity[kept], np.inf, None,
                      0.01)
    assert grown.splits > 0
    tree = refit(grown, indptr, indices, positive, weights, multiplicity, 0.01)
    totals: dict[int, list[float]] = {}
    for i in range(len(y)):  # brute force: walk each example down the tree
        node = tree.nodes[0]
        features = set(indices[indptr[i]:indptr[i + 1]].tolist())
        while not node.is_leaf:
            node = tree.nodes[node.true_child if node.feature in features else node.false_child]  # type: ignore[index]
        assert tree.leaf_of[i] == node.node
        entry = totals.setdefault(node.node, [0.0, 0.0, 0])
        entry[0 if positive[i] else 1] += weights[i]
        entry[2] += 1
    for node in tree.nodes:
        if node.is_leaf:
            w_pos, w_neg, count = totals.get(node.node, [0.0, 0.0, 0])
            assert node.examples == count
            assert node.w_positive == pytest.approx(w_pos, rel=1e-12)
            assert node.confidence == pytest.approx(confidence(w_pos, w_neg, 0.01), rel=1e-12)
    assert tree.nodes[0].examples == len(y)  # totals summed up to the root cover everything
    assert [n.feature for n in tree.nodes] == [n.feature for n in grown.nodes]


def run(settings: BoostSettings, iterations: int, split_at: int | None = None) -> tuple[np.ndarray, list]:
    indptr, indices, y, multiplicity = random_problem(5, n=600)
    booster = Booster(indptr, indices, 30, y, multiplicity, settings)
    trees = []
    for t in range(iterations):
        if split_at is not None and t == split_at:  # resume from the committed state alone
            booster = Booster(indptr, indices, 30, y, multiplicity, settings, margins=booster.margins.copy(),
                              iteration=booster.iteration, theta=booster.theta)
        result = booster.step()
        assert result is not None
        trees.append([(n.feature, n.confidence) for n in result.tree.nodes])
    return booster.margins, trees


def test_booster_with_sampling_resumes_bit_identically_and_differs_from_exact() -> None:
    sampled = BoostSettings(sample=80)
    margins, trees = run(sampled, 12)
    resumed_margins, resumed_trees = run(sampled, 12, split_at=5)
    assert margins.tobytes() == resumed_margins.tobytes() and trees == resumed_trees
    exact_margins, _ = run(BoostSettings(), 12)
    assert margins.tobytes() != exact_margins.tobytes()  # the sample really changed the trees
    other_margins, _ = run(BoostSettings(sample=80, sample_seed=1), 12)
    assert margins.tobytes() != other_margins.tobytes()


def test_sampling_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="sample"):
        BoostSettings(sample=1)
    with pytest.raises(ConfigurationError, match="mrl"):
        BoostSettings(sample=100, rule="l1", smoothing=0)
    assert BoostSettings.from_dict({"loss": "logistic"}).sample is None  # runs stored before: exact


def clparse(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, str(REPO / "cli.py"), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def dump(db: Path) -> tuple[list[tuple], list[tuple]]:
    nodes = read_rows(db, "SELECT l.name, n.iteration, n.node, n.feature_id, n.confidence, n.w_positive "
                          "FROM tree_nodes n JOIN labels l ON l.id = n.label_id ORDER BY 1, 2, 3")
    iterations = read_rows(db, "SELECT l.name, i.iteration, i.theta, i.loss_after FROM iterations i "
                               "JOIN labels l ON l.id = i.label_id ORDER BY 1, 2")
    return nodes, iterations


@pytest.mark.slow
def test_sampled_training_killed_and_resumed_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    from clparse.data import sample_path
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database
    from tests.conftest import backup_database

    base = tmp_path / "base.sqlite"
    init_database(base)
    prepare(base, [sample_path("train")], settings=PrepareSettings(tagger="perceptron", tagger_iterations=1))
    args = ("--labels", "NP,VP", "--max-iterations", "30", "--sample", "500", "--checkpoint-every", "4")
    straight = backup_database(base, tmp_path / "straight.sqlite")
    process = clparse("train", "--db", str(straight), *args)
    assert process.wait(timeout=600) == 0, process.stderr.read() if process.stderr else ""
    killed = backup_database(base, tmp_path / "killed.sqlite")
    for _ in range(3):
        process = clparse("train", "--db", str(killed), *args)
        deadline = time.monotonic() + 300
        before = read_rows(killed, "SELECT count(*) FROM iterations")[0][0]
        while process.poll() is None and time.monotonic() < deadline:
            if read_rows(killed, "SELECT count(*) FROM iterations")[0][0] >= before + 7:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
        process.wait(timeout=60)
    process = clparse("train", "--db", str(killed), *args)
    assert process.wait(timeout=600) == 0, process.stderr.read() if process.stderr else ""
    first, second = dump(straight), dump(killed)
    assert len(first[1]) == 60 and first == second
    settings = read_rows(killed, "SELECT settings_json FROM label_training")
    assert all('"sample": 500' in row[0] for row in settings)


def test_the_stratified_sample_keeps_every_rare_positive_and_estimates_each_class_without_bias() -> None:
    rng = np.random.default_rng(4)
    weights = rng.exponential(1.0, 80) ** 2
    positive = np.zeros(80, dtype=bool)
    positive[[3, 17, 40, 41, 77]] = True
    kept, carried = stratified_sample(weights, positive, 12, seed=2, iteration=1)
    assert len(kept) == 12 and kept.tolist() == sorted(kept.tolist())
    assert set(np.flatnonzero(positive)) <= set(kept.tolist())  # 5 positives <= 12 / 2: all kept ...
    assert carried[positive[kept]].tolist() == weights[positive].tolist()  # ... at their own weights
    subset = rng.random(80) < 0.4
    estimates = []
    for iteration in range(3000):
        kept, carried = stratified_sample(weights, positive, 12, seed=1, iteration=iteration)
        estimates.append(float(carried[subset[kept] & ~positive[kept]].sum()))
    mean, error = np.mean(estimates), np.std(estimates) / np.sqrt(len(estimates))
    assert abs(mean - weights[subset & ~positive].sum()) < 4 * error and np.std(estimates) > 0
    many = np.ones(80, dtype=bool)
    many[:5] = False  # 75 positives, 5 negatives: the negatives all kept, the positives get the rest
    kept, carried = stratified_sample(weights, many, 12, seed=2, iteration=1)
    assert len(kept) == 12 and set(range(5)) <= set(kept.tolist())


def rare_problem() -> tuple[np.ndarray, ...]:
    indptr, indices, _, multiplicity = random_problem(8, n=600)
    y = -np.ones(600, dtype=np.int8)
    y[[5, 300]] = 1  # two positives: a sample of 10 over both classes is unlikely to hold one
    return indptr, indices, y, multiplicity


def test_a_sample_without_positives_does_not_end_the_label() -> None:
    indptr, indices, y, multiplicity = rare_problem()
    weights = multiplicity * 0.5  # the first iteration's weights
    kept, _ = priority_sample(weights, 10, seed=0, iteration=1)
    assert not (y[kept] > 0).any()  # one sample over both classes loses the positives ...
    first = Booster(indptr, indices, 30, y, multiplicity, BoostSettings.from_dict({"sample": 10}))
    assert first.step() is None  # ... and the first version took that for convergence
    exact = Booster(indptr, indices, 30, y, multiplicity, BoostSettings()).step()
    booster = Booster(indptr, indices, 30, y, multiplicity, BoostSettings(sample=10))
    results = [booster.step() for _ in range(5)]
    assert exact is not None and all(r is not None and r.tree.splits > 0 for r in results)
    assert results[0] is not None and results[0].loss_after < results[0].loss_before
    assert results[-1] is not None and results[-1].loss_after < 0.5 * results[0].loss_before


def test_stored_sampled_runs_keep_the_first_version() -> None:
    assert BoostSettings(sample=100).sample_stratified
    assert not BoostSettings.from_dict({"sample": 100}).sample_stratified  # stored before the key
    assert BoostSettings.from_dict(BoostSettings(sample=100).to_dict()) == BoostSettings(sample=100)
    assert BoostSettings.from_dict({"smoothing": 0.5}) == BoostSettings()  # exact runs compare equal
