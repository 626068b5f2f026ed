"""The tagger net (:mod:`clparse.tag.net`, trained by :mod:`clparse.tag.net_train`) and the CRF + net
ensemble (:mod:`clparse.tag.ensemble`), stored by ``clparse train-tagger``.

Independent references: a plain-Python LSTM written from the equations checks the numpy net's batched,
masked code; PyTorch's own forward pass checks that the stored weights compute what was trained; the
ensemble's formula is checked by hand on two tags. Training needs PyTorch (the ``neural`` extra, which CI
installs): those tests are skipped, and say so, where it is missing.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.errors import ConfigurationError
from clparse.store.net_header import DIGEST_SPAN, HEADER
from clparse.tag.crf import CrfTagger
from clparse.tag.ensemble import EnsembleTagger
from clparse.tag.clusters import WordClusters
from clparse.tag.net import ARRAYS, CLUSTER_ARRAYS, LSTMS, NetVocabulary, TaggerNet, _lstm, _lstm_last
from clparse.tag.stored import load_tagger, tagged_words
from tests.conftest import dev_tagged, invoke_cli, read_rows, write_sql

TINY = dict(word_dim=6, char_dim=4, char_hidden=3, hidden=5)


def random_net(seed: int = 0, words: int = 6, chars: str = "abcdefgh", tags: int = 4,
               clusters: WordClusters | None = None) -> TaggerNet:
    rng = np.random.default_rng(seed)
    vocabulary = NetVocabulary(("<pad>", "<unk>", *(f"w{i}" for i in range(words))),
                               ("<pad>", "<unk>", "<bow>", "<eow>", *chars),
                               tuple(f"T{i}" for i in range(tags)))
    dims = (3, 2, 2)  # the cluster tables' widths
    sizes = {"char": (4, 3), "l0": (6 + 6 + (sum(dims) if clusters else 0), 5), "l1": (10, 5)}
    arrays = {"words": rng.normal(0, 1, (len(vocabulary.words), 6)),
              "chars": rng.normal(0, 1, (len(vocabulary.chars), 4)),
              "out_w": rng.normal(0, 1, (tags, 10)), "out_b": rng.normal(0, 1, tags)}
    for lstm in LSTMS:
        inputs, hidden = sizes[lstm.split("_")[0]]
        arrays[f"{lstm}_ih"] = rng.normal(0, 1, (4 * hidden, inputs))
        arrays[f"{lstm}_hh"] = rng.normal(0, 1, (4 * hidden, hidden))
        arrays[f"{lstm}_bias"] = rng.normal(0, 1, 4 * hidden)
    if clusters is not None:
        rows = (len(clusters.leaves) + 1, 65, 1025)
        for name, n, dim in zip(CLUSTER_ARRAYS, rows, dims):
            arrays[name] = rng.normal(0, 1, (n, dim))
    return TaggerNet(vocabulary, arrays, clusters)


def reference_lstm(inputs: list[list[float]], w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray,
                   reverse: bool) -> list[list[float]]:
    """The LSTM equations, one number at a time (gates i, f, g, o as PyTorch orders them)."""
    hidden = w_hh.shape[1]
    h, c = [0.0] * hidden, [0.0] * hidden
    out: list[list[float]] = [[] for _ in inputs]
    order = range(len(inputs) - 1, -1, -1) if reverse else range(len(inputs))
    for t in order:
        gates = [float(bias[r]) + sum(float(w_ih[r][k]) * inputs[t][k] for k in range(len(inputs[t])))
                 + sum(float(w_hh[r][k]) * h[k] for k in range(hidden)) for r in range(4 * hidden)]
        sig = [1 / (1 + math.exp(-g)) for g in gates]
        for j in range(hidden):
            c[j] = sig[hidden + j] * c[j] + sig[j] * math.tanh(gates[2 * hidden + j])
            h[j] = sig[3 * hidden + j] * math.tanh(c[j])
        out[t] = list(h)
    return out


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=5), st.integers(0, 2 ** 16))
def test_the_masked_batch_lstm_is_each_sequence_alone(lengths: list[int], seed: int) -> None:
    # padded, masked, many at once: each sequence's final state is the plain LSTM's, either direction
    rng = np.random.default_rng(seed)
    w_ih, w_hh, bias = rng.normal(0, 1, (12, 2)), rng.normal(0, 1, (12, 3)), rng.normal(0, 1, 12)
    padded = rng.normal(0, 1, (len(lengths), max(lengths), 2))
    for reverse in (False, True):
        last = _lstm_last(padded, np.array(lengths), w_ih, w_hh, bias, reverse)
        for row, length in enumerate(lengths):
            sequence = padded[row, :length].tolist()
            states = reference_lstm(sequence, w_ih, w_hh, bias, reverse)
            assert np.allclose(last[row], states[0 if reverse else -1], atol=1e-12)
            assert np.allclose(_lstm(padded[row, :length], w_ih, w_hh, bias, reverse), states, atol=1e-12)


def test_probabilities_are_distributions_and_unknown_words_and_characters_are_read() -> None:
    net = random_net()
    table = net.probabilities(["w1", "W1", "never-seen", "zzz", "w1"])
    assert table.shape == (5, 4) and np.allclose(table.sum(axis=1), 1.0) and (table > 0).all()
    assert not np.allclose(table[0], table[1])  # lower-cased alike, spelled apart: the characters differ
    assert net.probabilities([]).shape == (0, 4)


def test_bytes_round_trip_and_damage_is_refused() -> None:
    net = random_net()
    data = net.to_bytes()
    again = TaggerNet.from_bytes(data)
    assert again.to_bytes() == data
    words = ["w0", "abc", "w3"]
    assert np.array_equal(again.probabilities(words), net.probabilities(words))
    flipped = bytearray(data)
    flipped[-3] ^= 0x10
    for bad, says in ((bytes(flipped), "SHA-256"), (data[:40], "too short"), (b"x" * 60 + data[60:], "mark"),
                      (data[:-4], "SHA-256")):
        with pytest.raises(ConfigurationError, match=says):
            TaggerNet.from_bytes(bad)
    with pytest.raises(ConfigurationError, match="arrays"):
        TaggerNet(net.vocabulary, {name: net.arrays[name] for name in ARRAYS[:-1]})


def test_a_net_without_clusters_writes_the_bytes_it_wrote_before_clusters() -> None:
    # format 1, byte for byte: random_net()'s SHA-256 at commit 951b939, before nets read clusters
    data = random_net().to_bytes()
    assert HEADER.unpack_from(data)[1] == 1
    before = "6fb64464768acb29e409e4fd7362698522c1a7459a651141cabd2d72572138df"
    assert hashlib.sha256(data).hexdigest() == before


CLUSTERS = WordClusters({"w1": 170, "abc": 20138, "never-seen": 37, "ran": 170})


def test_a_net_reading_clusters_round_trips_and_reads_them() -> None:
    net = random_net(clusters=CLUSTERS)
    data = net.to_bytes()
    assert HEADER.unpack_from(data)[1] == 2
    again = TaggerNet.from_bytes(data)
    assert again.to_bytes() == data and again.clusters is not None and again.clusters.table == CLUSTERS.table
    words = ["w1", "never-seen", "zzz", "ran"]
    assert np.array_equal(again.probabilities(words), net.probabilities(words))
    # the same word with another cluster is read differently; the clusters are the input, nothing else
    other = TaggerNet(net.vocabulary, net.arrays, WordClusters({"w1": 37, "abc": 20138, "never-seen": 170,
                                                                 "ran": 170}))
    table, moved = net.probabilities(words), other.probabilities(words)
    assert not np.allclose(table[0], moved[0])
    # each word's cluster rows, by hand: leaves 37 -> 1, 170 -> 2, 20138 -> 3; prefixes + 1; 0 is none
    assert CLUSTERS.net_rows(words) == ([2, 1, 0, 2], [(170 & 63) + 1, (37 & 63) + 1, 0, (170 & 63) + 1],
                                        [171, 38, 0, 171])
    with pytest.raises(ConfigurationError, match="cluster tables"):
        TaggerNet(net.vocabulary, net.arrays, WordClusters({"w1": 170}))  # one leaf: the table has 4 rows
    with pytest.raises(ConfigurationError, match="layers do not fit"):
        TaggerNet(net.vocabulary, net.arrays)  # its first layer reads the cluster tables too
    with pytest.raises(ConfigurationError, match="SHA-256"):
        TaggerNet.from_bytes(data[:-5])  # cut short: the hash catches it before the clusters are read


def test_a_net_whose_header_misplaces_its_clusters_is_one_error() -> None:
    import json

    data = random_net(clusters=CLUSTERS).to_bytes()
    magic, version, reserved, _, length = HEADER.unpack_from(data)
    meta = json.loads(data[HEADER.size:HEADER.size + length])
    meta["clusters"] += 1
    text = json.dumps(meta).encode()
    body = text + data[HEADER.size + length:]
    bad = HEADER.pack(magic, version, reserved, hashlib.sha256(body).digest(), len(text)) + body
    with pytest.raises(ConfigurationError, match="word clusters are not where"):
        TaggerNet.from_bytes(bad)


def test_the_digest_span_holds_the_sha256_of_everything_after_the_header() -> None:
    """What reading.tagger_name reads in SQL at DIGEST_SPAN is the net's SHA-256 (checked by hashing)."""
    data = random_net().to_bytes()
    start, length = DIGEST_SPAN
    assert data[start:start + length] == hashlib.sha256(data[HEADER.size:]).digest()
    assert TaggerNet.from_bytes(data).digest == data[start:start + length].hex()


class StandInCrf:
    """A stand-in CRF: the same marginals for every word."""

    name = "crf"

    def __init__(self, marginal: dict[str, float]) -> None:
        self.marginal = marginal

    def labels(self) -> list[str]:
        return list(self.marginal)

    def marginals(self, words: list[str]) -> list[dict[str, float]]:
        return [dict(self.marginal) for _ in words]

    def to_bytes(self) -> bytes:
        return b""


def test_the_ensemble_is_the_weighted_geometric_mean_worked_by_hand() -> None:
    two_tags = StandInCrf({"A": 0.8, "B": 0.2})
    net = random_net(tags=2)
    net_p = net.probabilities(["w0"])[0]  # tags T0, T1: no tag in common with the CRF
    ensemble = EnsembleTagger(two_tags, net, 0.5)  # type: ignore[arg-type]
    assert ensemble.labels() == ["A", "B", "T0", "T1"]
    got = ensemble.probabilities(["w0"])[0]
    # each side gives the other's tags the floor 1e-12: sqrt(0.8 * 1e-12) : sqrt(0.2 * 1e-12) : ...
    raw = [math.sqrt(0.8e-12), math.sqrt(0.2e-12), math.sqrt(1e-12 * net_p[0]), math.sqrt(1e-12 * net_p[1])]
    assert np.allclose(got, [r / sum(raw) for r in raw], rtol=1e-9)
    assert ensemble.tag(["w0"]) == ["A"] if 0.8 > net_p.max() else ["T0" if net_p[0] > net_p[1] else "T1"]
    with pytest.raises(ConfigurationError, match="weight"):
        EnsembleTagger(two_tags, net, 1.5)  # type: ignore[arg-type]


def test_several_nets_are_one_opinion_beside_the_crf_worked_by_hand() -> None:
    """Two nets: P ∝ P_crf^0.5 · P_net1^0.25 · P_net2^0.25 (the nets' geometric mean weighs as the CRF)."""
    same_tags = StandInCrf({"T0": 0.7, "T1": 0.3})  # over the nets' own tags
    one, two = random_net(seed=1, tags=2), random_net(seed=2, tags=2)
    p1, p2 = one.probabilities(["w1"])[0], two.probabilities(["w1"])[0]
    ensemble = EnsembleTagger(same_tags, [one, two], 0.5)  # type: ignore[arg-type]
    raw = [0.7 ** 0.5 * p1[0] ** 0.25 * p2[0] ** 0.25, 0.3 ** 0.5 * p1[1] ** 0.25 * p2[1] ** 0.25]
    assert np.allclose(ensemble.probabilities(["w1"])[0], [r / sum(raw) for r in raw], rtol=1e-9)
    # one net given alone or in a list is the same tagger; the name lists every net, in order
    alone = EnsembleTagger(same_tags, one, 0.5)  # type: ignore[arg-type]
    listed = EnsembleTagger(same_tags, [one], 0.5)  # type: ignore[arg-type]
    assert np.array_equal(alone.probabilities(["w1", "w2"]), listed.probabilities(["w1", "w2"]))
    assert alone.name == f"crf+net:{one.digest[:16]}"
    assert ensemble.name == f"crf+net:{one.digest[:16]}+{two.digest[:16]}"
    with pytest.raises(ConfigurationError, match="at least one net"):
        EnsembleTagger(same_tags, [], 0.5)  # type: ignore[arg-type]


# ------------------------------------------------------------------- trained on the sample (PyTorch)

@pytest.fixture(scope="module")
def sample_sentences(trained_db: Path) -> tuple[list[list[tuple[str, str]]], list[list[tuple[str, str]]]]:
    from clparse.store.runs import Runs

    runs = Runs(trained_db)
    return ([tagged_words(t) for t in runs.gold_trees("train")],
            [tagged_words(t) for t in runs.gold_trees("dev")])


@pytest.mark.parametrize("clusters", [True, False])
def test_the_stored_weights_compute_what_pytorch_trained(sample_sentences: tuple[list, list],
                                                        clusters: bool) -> None:
    pytest.importorskip("torch", reason="training the tagger net needs the neural extra (PyTorch)")
    from clparse.tag.net_train import NetSettings, torch_probabilities, train_net

    train, dev = sample_sentences
    # no dev: the last epoch is kept
    trained = train_net(train[:60], (), NetSettings(epochs=2, clusters=clusters, **TINY))
    assert trained is not None and trained.epoch == 2 and len(trained.epochs) == 2
    assert (trained.net.clusters is not None) == clusters
    net = TaggerNet.from_bytes(trained.net.to_bytes())
    for sentence in dev[:10]:
        words = [w for w, _ in sentence]
        pytorch = torch_probabilities(trained.model, net, words)
        assert np.allclose(net.probabilities(words), pytorch, atol=1e-5)


def test_an_earlier_epoch_kept_is_the_net_stored(sample_sentences: tuple[list, list],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the kept epoch's arrays are its own: the epochs after it do not reach into them
    pytest.importorskip("torch", reason="training the tagger net needs the neural extra (PyTorch)")
    from clparse.tag import net_train

    scores = iter([0.9, 0.5, 0.4])
    monkeypatch.setattr(net_train, "net_accuracy", lambda net, sentences: next(scores))
    train, dev = sample_sentences
    trained = net_train.train_net(train[:60], dev[:5], net_train.NetSettings(epochs=3, **TINY))
    assert trained is not None and trained.epoch == 1
    words = [w for w, _ in dev[0]]
    stored = TaggerNet.from_bytes(trained.net.to_bytes())
    assert np.array_equal(stored.probabilities(words), trained.net.probabilities(words))
    last = TaggerNet(trained.net.vocabulary, net_train._arrays(trained.model), trained.net.clusters)
    assert not np.allclose(last.probabilities(words), stored.probabilities(words))


def test_a_header_with_impossible_shapes_is_one_error() -> None:
    import hashlib
    import json
    import struct

    net = random_net()
    data = net.to_bytes()
    header = struct.Struct("<16sHH32sI")
    magic, version, reserved, _, length = header.unpack_from(data)
    meta = json.loads(data[header.size:header.size + length])
    meta["arrays"][0][1] = [-1, 6]
    text = json.dumps(meta).encode()
    body = text + data[header.size + length:]
    bad = header.pack(magic, version, reserved, hashlib.sha256(body).digest(), len(text)) + body
    with pytest.raises(ConfigurationError, match="shape"):
        TaggerNet.from_bytes(bad)


def test_training_keeps_the_best_epoch_on_dev_and_stops_when_asked(
        sample_sentences: tuple[list, list]) -> None:
    pytest.importorskip("torch", reason="training the tagger net needs the neural extra (PyTorch)")
    from clparse.tag.net_train import NetSettings, net_accuracy, train_net

    train, dev = sample_sentences
    trained = train_net(train[:60], dev[:20], NetSettings(epochs=3, **TINY))
    assert trained is not None
    best = max(trained.epochs, key=lambda e: (e.dev_accuracy, -e.epoch))
    assert trained.epoch == best.epoch and trained.dev_accuracy == best.dev_accuracy
    assert trained.dev_accuracy == net_accuracy(trained.net, dev[:20])
    calls = []
    assert train_net(train[:60], (), NetSettings(epochs=3, **TINY),
                     should_stop=lambda: calls.append(1) is None and len(calls) > 2) is None


def test_without_pytorch_training_is_one_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                     sample_sentences: tuple[list, list]) -> None:
    import sys

    from clparse.tag.net_train import train_net

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(ConfigurationError, match=r"clparse\[neural\]"):
        train_net(sample_sentences[0][:5])


@pytest.fixture(scope="module")
def net_db(copy_trained_db: object) -> Path:
    """A copy of the sample run with a net of two epochs stored (kept even if the pair were behind the CRF
    alone on this small dev set: the tests here are about storing and using a net, not its accuracy)."""
    pytest.importorskip("torch", reason="training the tagger net needs the neural extra (PyTorch)")
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    done = api.train_tagger(db, epochs=2, keep_worse=True)
    assert done is not None and done.kept
    return db


def test_a_net_is_stored_only_if_the_pair_tags_dev_at_least_as_well_as_the_crf(
        copy_trained_db: object, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch", reason="training the tagger net needs the neural extra (PyTorch)")
    from clparse import api

    db = copy_trained_db()  # type: ignore[operator]
    first = api.train_tagger(db, epochs=1)
    assert first is not None and first.from_files and first.train_sentences == 453  # the sample's every tree
    pair, crf = first.stored.dev_accuracy, first.crf_dev_accuracy
    assert first.kept == (pair >= crf) and not first.replaced
    # a pair behind the CRF (as with a net barely trained on a larger dev set): nothing stored
    monkeypatch.setattr(EnsembleTagger, "accuracy", lambda self, sentences: 0.5)
    again = invoke_cli(["train-tagger", "--db", db, "--epochs", 1])
    assert again.exit_code == 0, again.stderr
    assert "nothing stored: with this net (epoch 1 of 1" in again.stdout, again.stdout
    assert "CRF + net 50.00 %" in again.stdout
    rows = read_rows(db, "SELECT count(*) FROM tagger_nets")
    assert rows == [(1 if pair >= crf else 0,)]  # the first net, if it was stored, is still the one


def test_train_tagger_stores_the_net_and_parse_tags_with_both(net_db: Path, trained_db: Path,
                                                              tmp_path: Path) -> None:
    (row,) = read_rows(net_db, "SELECT epochs, kept_epoch, crf_weight, net_dev_accuracy, dev_accuracy, "
                               "train_sentences FROM tagger_nets")
    assert row[0] == 2 and row[1] in (1, 2) and row[2] == 0.5 and 0 < row[3] <= 1 and 0 < row[4] <= 1
    tagger = load_tagger(net_db)
    assert isinstance(tagger, EnsembleTagger) and isinstance(load_tagger(trained_db), CrfTagger)
    from clparse.read import read_trees
    from clparse.store.runs import Runs

    # measured on every tree of the dev files prepare read (the stored dev split keeps the short ones only)
    files = [path for split, path, _ in Runs(net_db).treebank_files() if split == "dev"]
    every = [[(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
             for path in files for tree in read_trees(path)]
    assert len(every) > len(dev_tagged(net_db))
    assert tagger.accuracy([s for s in every if s]) == pytest.approx(row[4])
    dev = dev_tagged(net_db)
    words = " ".join(w for w, _ in dev[0])
    tagged = invoke_cli(["tag", "--db", net_db], words + "\n")
    assert tagged.exit_code == 0 and [t.rsplit("/", 1)[1] for t in tagged.stdout.split()] == \
        tagger.tag([w for w, _ in dev[0]])
    # the same bytes in one process and in two
    text = tmp_path / "in.txt"
    text.write_text("".join(" ".join(w for w, _ in s) + "\n" for s in dev[:12]))
    one = invoke_cli(["parse", "--db", net_db, "--theta", 3, "--beam", 4, text])
    two = invoke_cli(["parse", "--db", net_db, "--theta", 3, "--beam", 4, "--jobs", 2, text])
    assert one.exit_code == two.exit_code == 0 and one.stdout == two.stdout


def test_a_net_file_paired_with_the_runs_crf_tags_as_the_stored_pair(net_db: Path, trained_db: Path,
                                                                     tmp_path: Path) -> None:
    from clparse.tag.ensemble import with_net_files

    blob = read_rows(net_db, "SELECT model_blob FROM tagger_nets")[0][0]
    net_file = tmp_path / "net.bin"
    net_file.write_bytes(blob)
    stored = load_tagger(net_db)
    assert isinstance(stored, EnsembleTagger)
    words = [[w for w, _ in sentence] for sentence in dev_tagged(net_db)[:20]]
    for base in (load_tagger(trained_db), stored):  # the CRF alone, or a pair whose net is replaced
        paired = with_net_files(base, [net_file])
        assert paired.name == stored.name
        assert [paired.tag(w) for w in words] == [stored.tag(w) for w in words]
    with pytest.raises(ConfigurationError, match="CRF"):
        with_net_files(object(), [net_file])  # a perceptron tagger, say: no marginals to pair


def test_a_chooser_fitted_on_the_crf_alone_is_not_used_with_the_net(net_db: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from clparse import api
    from clparse.calibrate import tag_chooser
    from clparse.parser import Parser

    monkeypatch.setattr(tag_chooser, "MIN_PAIRS", 1)
    monkeypatch.setattr(tag_chooser, "MIN_TWO_FOLD_GAIN", -100.0)
    stored = read_rows(net_db, "SELECT count(*) FROM tag_choosers")[0][0]
    write_sql(net_db, "INSERT INTO tag_choosers (run_id, theta, beam, max_pops, aggregator, tagger, "
                      "alternatives, weights_json, sentences, pairs, f1_best, f1_rule, f1_chooser, "
                      "f1_two_fold, seconds, clparse_version, created_at) "
                      "SELECT id, '3.0', 4, 100, 'sum', 'crf', 3, "
                      "'{\"bias\": 9, \"lowest\": 0, \"loss\": 0, \"certainty\": 0}', 1, 1, 0, 0, 0, 0, 0, "
                      "'test', 'now' FROM runs")
    parser = Parser.from_db(net_db, theta=3.0)
    assert parser.chooser is None and "tagger (crf+net:" in (parser.chooser_note or "")
    fit = api.calibrate_tags(net_db, 3.0, beam=4)
    assert fit is not None and fit.chooser_id is not None
    (tagger,), = read_rows(net_db, "SELECT tagger FROM tag_choosers WHERE id = ?", fit.chooser_id)
    digest = read_rows(net_db, "SELECT lower(hex(substr(model_blob, 21, 32))) FROM tagger_nets")[0][0]
    assert tagger == f"crf+net:{digest[:16]}" == load_tagger(net_db).name  # type: ignore[union-attr]
    assert Parser.from_db(net_db, theta=3.0).active_chooser is not None
    opened = Parser.from_db(net_db, theta=3.0)  # its tagger loads at its first untagged sentence
    assert opened.chooser is not None
    assert read_rows(net_db, "SELECT count(*) FROM tag_choosers")[0][0] == stored + 2
    # another net: the chooser was fitted on the old one's taggings, so neither a parser opened now nor
    # one opened before (whose tagger loads only now) uses it
    done = api.train_tagger(net_db, epochs=1, seed=7, keep_worse=True)
    assert done is not None and done.kept and done.replaced
    assert opened.active_chooser is None
    again = Parser.from_db(net_db, theta=3.0)
    assert again.chooser is None and "tagger (crf+net:" in (again.chooser_note or "")


def test_check_names_a_damaged_net_and_export_keeps_it(net_db: Path, copy_trained_db: object,
                                                       tmp_path: Path) -> None:
    from clparse.store.database import backup_database

    out = tmp_path / "parser.sqlite"
    assert invoke_cli(["export", "--db", net_db, "--output", out]).exit_code == 0
    assert read_rows(out, "SELECT model_blob FROM tagger_nets") == read_rows(net_db, "SELECT model_blob FROM "
                                                                                     "tagger_nets")
    assert isinstance(load_tagger(out), EnsembleTagger)
    damaged = backup_database(net_db, tmp_path / "damaged.sqlite") and tmp_path / "damaged.sqlite"
    import apsw

    connection = apsw.Connection(str(damaged))  # one float of the net changed, its header left as it was
    (blob,) = connection.execute("SELECT model_blob FROM tagger_nets").fetchone()
    changed = bytearray(blob)
    changed[-2] ^= 0x01
    connection.execute("UPDATE tagger_nets SET model_blob = ?", (bytes(changed),))
    connection.close()
    done = invoke_cli(["check", "--db", damaged])
    assert done.exit_code == 1 and "the tagger net's model_blob (run 1) fails its checksum" in done.stderr
    parsed = invoke_cli(["parse", "--db", damaged, "--theta", 3], "The dog barked .\n")
    assert parsed.exit_code == 1 and "SHA-256" in parsed.stderr and "Traceback" not in parsed.stderr
    assert str(damaged) in parsed.stderr and "train-tagger" in parsed.stderr


def test_train_tagger_refuses_a_run_without_a_crf_and_bad_options(tmp_path: Path) -> None:
    missing = invoke_cli(["train-tagger", "--db", tmp_path / "none.sqlite"])
    assert missing.exit_code == 1 and "no such database" in missing.stderr
    zero = invoke_cli(["train-tagger", "--db", tmp_path / "none.sqlite", "--epochs", 0])
    assert zero.exit_code == 2 and "--epochs" in zero.stderr


def test_parsing_with_the_net_never_imports_pytorch(net_db: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from clparse.parser import Parser; "
            f"parser = Parser.from_db({str(net_db)!r}, theta=3.0, beam=4); "
            "assert type(parser.tagger).__name__ == 'EnsembleTagger'; parser.parse('The dog barked .'); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_what_refuses_the_work_is_asked_before_an_older_schema_is_upgraded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import sys

    old = tmp_path / "old.sqlite"
    shutil.copy(Path(__file__).parent / "data" / "old_schemas" / "schema-0011.sqlite", old)
    monkeypatch.setitem(sys.modules, "torch", None)
    done = invoke_cli(["train-tagger", "--db", old])
    assert done.exit_code == 1 and "clparse[neural]" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.bak"))  # not upgraded: no backup copy made
    assert read_rows(old, "SELECT version_num FROM alembic_version") == [("0011",)]
