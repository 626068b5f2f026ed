"""The CRF POS tagger: byte round trips, reproducible training, refusal of bad bytes, the features,
accuracy."""

from __future__ import annotations

import hashlib
import pickle
import struct
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict

import pytest

from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.read import read_trees
from clparse.tag.crf import FEATURE_SET, FORMAT_VERSION, MAGIC, CrfTagger, sentence_features
from clparse.tag.perceptron import Tagger

TaggedSentences = list[list[tuple[str, str]]]

TINY: TaggedSentences = [
    [("the", "DT"), ("dog", "NN"), ("barks", "VBZ")],
    [("a", "DT"), ("cat", "NN"), ("sleeps", "VBZ")],
    [("Dogs", "NNS"), ("bark", "VBP"), (".", ".")],
] * 5
HEADER = struct.Struct("<16sHH32s")  # written out here on purpose: the format is a promise to stored models


def _sample(split: str) -> TaggedSentences:
    return [[(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
            for tree in read_trees(sample_path(split))]


@pytest.fixture(scope="module")
def train_sents() -> TaggedSentences:
    return _sample("train")


@pytest.fixture(scope="module")
def dev_sents() -> TaggedSentences:
    return _sample("dev")


@pytest.fixture(scope="module")
def sample_tagger(train_sents: TaggedSentences) -> CrfTagger:
    return CrfTagger.train(train_sents, iterations=50)  # about 1.5 s; the default 150 is for real data


@pytest.fixture(scope="module")
def tiny_model() -> bytes:
    return CrfTagger.train(TINY, iterations=10).to_bytes()


def _envelope(model: bytes, version: int = FORMAT_VERSION, feature_set: int = FEATURE_SET) -> bytes:
    """Our header in front of ``model``, with a correct hash: only the CRFsuite layout checks can object."""
    return HEADER.pack(MAGIC, version, feature_set, hashlib.sha256(model).digest()) + model


def test_reload_from_bytes_tags_identically(sample_tagger: CrfTagger, dev_sents: TaggedSentences) -> None:
    data = sample_tagger.to_bytes()
    restored = CrfTagger.from_bytes(data)
    words = [[w for w, _ in sentence] for sentence in dev_sents]
    assert restored.tag_many(words) == sample_tagger.tag_many(words)
    assert restored.to_bytes() == data
    assert pickle.loads(pickle.dumps(restored)).tag_many(words[:5]) == sample_tagger.tag_many(words[:5])
    assert set(restored.labels()) == {t for s in _sample("train") for _, t in s}


def test_training_twice_gives_identical_bytes(train_sents: TaggedSentences) -> None:
    subset = train_sents[:100]
    first = CrfTagger.train(subset, iterations=15).to_bytes()
    assert CrfTagger.train(subset, iterations=15).to_bytes() == first
    # the settings do reach CRFsuite
    assert CrfTagger.train(subset, iterations=15, c1=0.1).to_bytes() != first


def test_beats_the_most_frequent_tag_baseline(sample_tagger: CrfTagger, train_sents: TaggedSentences,
                                               dev_sents: TaggedSentences) -> None:
    seen: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for sentence in train_sents:
        for word, tag in sentence:
            seen[word][tag] += 1
    commonest = Counter(tag for sentence in train_sents for _, tag in sentence).most_common(1)[0][0]
    tokens = [(w, t) for sentence in dev_sents for w, t in sentence]
    baseline = sum((seen[w].most_common(1)[0][0] if w in seen else commonest) == t
                   for w, t in tokens) / len(tokens)
    # Measured: baseline 0.765, CRF 0.926 (50 iterations), NLTK perceptron 0.875 on the same sample.
    accuracy = sample_tagger.accuracy(dev_sents)
    assert accuracy > baseline + 0.10
    assert accuracy > 0.90


def test_features_of_a_tiny_sentence() -> None:
    assert sentence_features(["Hi", "42"]) == [
        ["bias", "w=hi", "p1=h", "s1=i", "p2=hi", "s2=hi", "shape=Xx", "init_cap_first",
         "w-2=<s2>", "w-1=<s1>", "w+1=42", "w+2=</s1>", "w-1|w=<s1>|hi", "w|w+1=hi|42", "BOS"],
        ["bias", "w=42", "p1=4", "s1=2", "p2=42", "s2=42", "shape=d", "has_digit", "all_digit",
         "w-2=<s1>", "w-1=hi", "w+1=</s1>", "w+2=</s2>", "w-1|w=hi|42", "w|w+1=42|</s1>", "EOS"],
    ]
    assert sentence_features(["UN-5"]) == [
        ["bias", "w=un-5", "p1=u", "s1=5", "p2=un", "s2=-5", "p3=un-", "s3=n-5", "p4=un-5", "s4=un-5",
         "shape=X-d", "has_digit", "has_hyphen", "init_cap_first", "all_caps",
         "w-2=<s2>", "w-1=<s1>", "w+1=</s1>", "w+2=</s2>", "w-1|w=<s1>|un-5", "w|w+1=un-5|</s1>",
         "BOS", "EOS"],
    ]
    middle = sentence_features(["a", "Big", "dog", "."])[1]
    assert "init_cap" in middle and "init_cap_first" not in middle and "BOS" not in middle
    assert middle[-2:] == ["w-1|w=a|big", "w|w+1=big|dog"]
    assert sentence_features([]) == []


def _flip(data: bytes, position: int) -> bytes:
    return data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1:]


def _bad_bytes(model: bytes) -> dict[str, bytes]:
    """Damaged or foreign inputs, by name; ``model`` is a good tagger's to_bytes()."""
    crf = model[HEADER.size:]
    stated_size = struct.pack("<I", len(crf) + 4)
    return {
        "empty": b"",
        "text": b"not a tagger model",
        "png": b"\x89PNG\r\n\x1a\n" + bytes(100),
        "perceptron json": Tagger.train(TINY).to_json().encode(),
        "bare crfsuite": crf,
        "truncated header": model[:20],
        "truncated model": model[: len(model) // 2],
        "one byte changed": _flip(model, len(model) - 30),
        "hash changed": _flip(model, 20),
        "format version": _envelope(crf, version=FORMAT_VERSION + 1),
        "feature set": _envelope(crf, feature_set=FEATURE_SET + 1),
        # valid hash, broken CRFsuite layout: these reach the checks that stand between CRFsuite and a crash
        "crfsuite magic": _envelope(b"lCRX" + crf[4:]),
        "crfsuite size": _envelope(crf[:4] + stated_size + crf[8:]),
        "crfsuite truncated": _envelope(crf[:4] + struct.pack("<I", 1000) + crf[8:1000]),
        "label offset": _envelope(crf[:32] + struct.pack("<I", len(crf) - 8) + crf[36:]),
        "feature chunk": _envelope(crf[:28] + struct.pack("<I", 4) + crf[32:]),
    }


@pytest.mark.parametrize("name", list(_bad_bytes(b"x" * 100)))
def test_bad_bytes_are_a_configuration_error(name: str, tiny_model: bytes) -> None:
    data = _bad_bytes(tiny_model)[name]
    with pytest.raises(ConfigurationError, match="^malformed CRF tagger model: ") as caught:
        CrfTagger.from_bytes(data)
    assert "\n" not in str(caught.value)


def test_bad_bytes_messages_say_what_is_wrong(tiny_model: bytes) -> None:
    bad = _bad_bytes(tiny_model)
    expected = {"bare crfsuite": "feature set is unknown", "truncated header": "truncated",
                "one byte changed": "SHA-256", "truncated model": "SHA-256", "feature set": "feature set 2",
                "format version": "version 2", "png": "does not start with", "crfsuite size": "header says"}
    for name, words in expected.items():
        with pytest.raises(ConfigurationError, match=words):
            CrfTagger.from_bytes(bad[name])
    with pytest.raises(ConfigurationError, match="expected bytes, got str"):
        CrfTagger.from_bytes("lCRF")  # type: ignore[arg-type]


def test_random_damage_never_crashes_the_process(tiny_model: bytes) -> None:
    """Random changes to the CRFsuite part, rehashed so they reach CRFsuite's layout checks.

    Run in a child process: without those checks CRFsuite segfaults within a few hundred trials
    (measured), which would take pytest down with it.
    """
    script = textwrap.dedent("""
        import hashlib, random, struct, sys
        from clparse.errors import ConfigurationError
        from clparse.tag.crf import FEATURE_SET, FORMAT_VERSION, MAGIC, CrfTagger
        model = sys.stdin.buffer.read()[52:]
        rng = random.Random(7)
        opened = refused = 0
        for _ in range(1500):
            data = bytearray(model)
            if rng.random() < 0.5:
                for _ in range(rng.randint(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                at = rng.randrange(len(data) - 4)
                value = rng.choice([0, 1, 2**32 - 1, rng.randrange(2**32), rng.randrange(len(data))])
                data[at:at + 4] = struct.pack("<I", value)
            crf = bytes(data)
            try:
                tagger = CrfTagger.from_bytes(struct.pack("<16sHH32s", MAGIC, FORMAT_VERSION, FEATURE_SET,
                                                          hashlib.sha256(crf).digest()) + crf)
                tagger.tag(["the", "dog", "barks", "zzz"])
                opened += 1
            except ConfigurationError:
                refused += 1
        print(opened, refused)
    """)
    done = subprocess.run([sys.executable, "-c", script], input=tiny_model, capture_output=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    opened, refused = map(int, done.stdout.split())
    assert refused > 0 and opened + refused == 1500


def test_words_that_are_not_utf8_are_tagged() -> None:
    # A lone surrogate (stdin decoded with surrogateescape) makes pycrfsuite raise SystemError.
    data = [[("a", "DT"), ("dog", "NN")], [("a", "DT"), ("b\udc80d", "NN")]] * 5
    tagger = CrfTagger.train(data, iterations=10)
    assert tagger.tag(["a", "b\udc80d"]) == ["DT", "NN"]
    # the escape is what the model sees
    assert tagger.tag(["\udcff", "dog"]) == tagger.tag(["\\udcff", "dog"])


def test_bad_input_is_refused_like_the_perceptron() -> None:
    tagger = CrfTagger.train(TINY, iterations=10)
    assert tagger.tag([]) == []
    with pytest.raises(ValueError, match="word 1"):
        tagger.tag(["the", "", "barks"])
    with pytest.raises(ValueError, match="word 1"):
        tagger.tag(["the", 3, "barks"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        tagger.tag("the dog")
    with pytest.raises(ValueError, match="sentence 1, word 0"):
        CrfTagger.train([[("a", "DT")], [("", "NN")]])
    with pytest.raises(ValueError, match="sentence 0, word 1"):
        CrfTagger.train([[("a", "DT"), ("dog", "")]])
    with pytest.raises(ValueError, match="no tagged words"):
        CrfTagger.train([[], []])
    with pytest.raises(ValueError, match="no tagged words"):
        tagger.accuracy([[]])
    with pytest.raises(ValueError, match="sentence 2: a tag cannot be encoded as UTF-8"):
        CrfTagger.train([[("a", "DT")], [], [("b", "N\udc80")]])
    for settings in ({"iterations": 0}, {"c1": -1.0}, {"c2": float("nan")}):
        with pytest.raises(ConfigurationError):
            CrfTagger.train(TINY, **settings)  # type: ignore[arg-type]
