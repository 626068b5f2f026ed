"""The CRF POS tagger: byte round trips, reproducible training, refusal of bad bytes, the features,
accuracy, and models stored with the old feature set (1) tagging exactly as before (set 2 and set 3:
tests/test_tagger_feature_sets.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import struct
import subprocess
import sys
import textwrap
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable

import pytest

from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.read import read_trees
from clparse.tag.clusters import package_clusters
from clparse.tag.crf import (
    FEATURE_SET,
    FORMAT_VERSION,
    MAGIC,
    CrfTagger,
    Lexicon,
    sentence_features,
    sentence_features_v2,
    sentence_features_v3,
)
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
    """Feature set 1: its payload is CRFsuite's model alone, which the damage tests below aim at."""
    return CrfTagger.train(TINY, iterations=10, feature_set=1).to_bytes()


def _envelope(model: bytes, version: int = FORMAT_VERSION, feature_set: int = 1) -> bytes:
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
                "one byte changed": "SHA-256", "truncated model": "SHA-256",
                "feature set": f"feature set {FEATURE_SET + 1}",
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
        from clparse.tag.crf import FORMAT_VERSION, MAGIC, CrfTagger
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
                tagger = CrfTagger.from_bytes(struct.pack("<16sHH32s", MAGIC, FORMAT_VERSION, 1,
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


# A model stored by clparse before feature set 2 (commit 454f360): CrfTagger.train(TINY, iterations=10),
# zlib-compressed. It must keep loading and tag exactly as it did then: tags and CRFsuite's
# probabilities were recorded with that commit's code.
STORED_V1 = zlib.decompress(base64.b64decode(
    "eNrtWgtQlNcVXmDlueyDh6ACYkABxR+WN7q7yGtNW11fDLHqgLx8FIIbdi3WWfGRRDuVMmmTaGbAjTEmNlFJO7GZ0RBMraUJKi0N"
    "LY4aMplAk8wwlFomMYmhPefu2f1/17slBs2MGX/mm4//++8995x7z/337oGqOnNFg6VGsFZsFKoaNsi88Kf1w6ztl+ecTNn7aWnb"
    "i32pQy3T240/Gu3WCH86/PwKv2N1hSuNRXEymXHZ0sJqmePyBeQDUgGHp8hkVqVMdnmmTJYcC+2K80vMoBXLxMsbcOTVjQVDT+7O"
    "w3sv0m+8+0iIbv/7ec427poPR5OTHrbtp0s+yzzNtCkczZej+dHYv0j48o1C37NM8+doAeRP/eJPvjpde5RpgTT2y7V/nFr+hZ1p"
    "QdSu59UPOg5ZP2aagtMumGNPyWmn4rRTc9ppOO1COFooRwsjbfXsvVdfO9LHtHCONpXTN4KjRXL6TiMtcMXOpV1JzUybztFmcLQo"
    "jhbN0WI42kyOFsvRZnG0hzhaHEeL52izKddC9zfa3xu/yrQ5HC2BoyVytCSONpejzeNoyRxtPkcTOFoKR0ul/IseG9b89/Ilpmk5"
    "WhpHS+doGRwtk6NlcbRsjpbD0XLpnTBeOGqRDTniWMDRFnI0HUfTczQDR8vjaIvcNOe7D/nLC7tObf1ZyCIvuse80q298lnZvmCm"
    "+VBsXoMHPu9Vfc76ysne8j9sS+8ulS8qXFFU0OfvsPnYqqJKfO91+MseXA8udq3zFz9bH1zfv6vuPllf24M8vK+v5u/Z+rXdp/Gc"
    "uAO/8fxQVCJzHiVMJtYTTxClBWtcpwuTaRVjh76cnS682Qkx/0RrtSA5S+yo/712Aeds8eta38w40LuHL3RFcp4PPvuB3Qj6VyN7"
    "vFdKnmNb7IdjoF1sg8/xTFOpEc80+F2zTO05TpPC4XGZYnJrWu/Wv4nuW9x0u8IxW86rU3F3cqnHzc7AJO2OKO5Njo9/S7vK4P/f"
    "L4aeC27tDMF3Np4p+Nb1ca0v2WmawF4LPbcTtwffm3nsdLPb42GcAQ/6COnjxEqlg2OIBeXk/DZM0N/k4XnZNxy3Xslfpxa3/na3"
    "+3a67yTuUd7d9RkgeyPf0O74JMdXqvjzIKj4dg2qbzeeyUO/Mje9fgL7Taq7M98tE9ixT/C8/Q796FTd28/8Hg/2Bzys711/L7uN"
    "r1RPLt4Y6i+ov9uzkkHteb7w+GDZVGGu0W9jBxus1TbOT9PrLGkG5qRD0IKgNbjOOAXLVrkqJ2atvpr9gqUSc5q+egv7DYvD5nS4"
    "28h+Fe2CGX8qADfOAyEFlQBypVFfWdFQa2FPyXglqwvjjUWrt7CCMI1UWcFKwXhnSdNDL6U4Lphh9V+8taTr0aaaxjBnsEFY2ZeF"
    "n6FnY4Y4fQA3rZtqWLnXn6LHMMJcXmvJ6/Bb44AZm0olZuhja8ReNkc8EVRSbrRhb6bZHDYiaUqLYUqnOSdKb6mrqTFbWJWXpsHC"
    "yrsUuaWOFXYpcmgYLUYOXVk1lyJHMzPFyNEwK+JS5GyYWWQLI69gpVtn3FUVVla21bhiAsVG3sVTTdwRlEOkqGaTA2wOLKx6S87C"
    "XYLoHT5MFL1jjZNE79j9XJoVR5qu3sbqtLi2m+s3W8urKszlGzY3WKysVBtA68MWeL4zLFgegVVoxaXBPLQx8ylOnUWBElszVqn1"
    "c6UkK9JSEtay6izFA4/SxXiwZYboP+uZKdlFbMQsl19a8CvbPWVo/Bz6S4eYMjaBlWLlzCnBVYI1o5WFonsCK7qKG1tgBVfnBmQe"
    "GCQuscHynIMxJ2iwRfR3FYcHAi2tz65pJ70Ut79J5AuzQ/4cIN4rdt+csTpQ8vb8j9GYK/m2otLKl9pha2uaG57Nk7TT/GN7r/Rb"
    "T2ji2NjOoNvHiyrsercWxouZ63Xk75Jx51Quv97Paa8tTGxMBLs5Z45fTJC01+Uc3pIdcHt7/V/W51+F9nnei3+uCfT8di1uOtt5"
    "A54X90fn7JL4/XB4gb1Ucv+DjWn7quB+6Tlr72LOeKaqtcp/S/xe1loSfh3arfnJitHnOeOv82uyPyVpXx50Pv1tsF85tl/9mGTc"
    "qjW55y5I2lUbhg6c5dirqXr/9CXot6G5+oofx7/62qSXP4Z+Dd5vvfWpxP7Wrjf7fyxpv300tONFeL790vCB9UGe523H6+3PPQX2"
    "do7WFxVL2u3uWuO7R+LfnuXGjjc4dh7/8LgwKNF/+dKe0b9Cv5YFTz4dx8nPp/O+OP4R+NmaeGVLisR+a3f+cz/kfMu2f/SO7HWJ"
    "/sKxg78Nkdj9zdm9W2eBneN/i8iwcObz5MGhKTmS9r/ze++TG2DvjFAa9ThnfjvXvnI9QqKf6y3f5AV231kf++ghid4Xdih/pSTu"
    "/sWp117jjN+/L/rYGeg3eE3VHcOZv3/m9rZlSfSRg90Rr0D7fw2s2uHLaf/1o28bfgX+f618WL0l6NaqA+4r3Ns4j5jzmOeYg7gf"
    "sA/mA84l5ifmGO4rzCGcD8w1jBv3JO5D3BuYT7i3cZ4wdvQLY8H3C+51XEfcGzg/uDdxHXBN8T2C7xxcD8whzC/cOzg/mPOYH5jD"
    "uF8xRpwXnAPMP5xTzFeMDd83uLfw/YS5h/sH3ymYb7hH8f2HuYB55ljjJcaVxhJ67crh81UBCANEAmIBibHijOE5K5+4QKIVEheR"
    "lg82I30cbXXwGV0EWAIoAawDVAPqAFaADfAEoBnwDKANcBRwAnAK0AE4D7gI6ANcAwwChgFjgJsAOXzyKwBhgChAPCAZkAHQAYoA"
    "SwAlgHWAakAdwAqwAZ4ANAOeAbQBjgJOAE4BOgDnARcBfYBrgEHAMGAMcBMgh5OGAhAGiALEA5IBGQBdnPh/Dl4SeBP7EMuJpxD7"
    "Ejv/V8H5/wkBxIHEQcQK4mBiJbGKWE2sIQ4hDiUOIw4nnkocQRxJPI14OvEM4ijiaOIY4pnEscSziB8ijiOOJ55NPIc4gTiROIl4"
    "LvE84mTi+cQCcQpxKrGWOI04nTiDOJM4izibOIc4l3gB8UJiHbGe2ECcR4xnkv8BXKU0jA=="
))
STORED_V1_SHA256 = "11f2bead820449b5b8f3a8a1ebc1e418de90eb4d2262f7e2c5e88de332a2808e"
STORED_V1_TAGS = [  # words, tags, probability of the tag sequence (CRFsuite), all as of 454f360
    (["the", "cat", "barks"], ["DT", "NN", "VBZ"], 0.955844),
    (["Cats", "bark", "."], ["DT", "NN", "VBZ"], 0.428914),
    (["a", "zebra", "sleeps", "."], ["DT", "NN", "VBZ", "."], 0.362588),
    (["The", "Dog", "Barks"], ["DT", "NN", "VBZ"], 0.948959),
    (["bark", "dogs", "the"], ["DT", "NN", "VBZ"], 0.865562),
    (["Sleeps", "a", "1990s", "UN-5"], ["DT", "NN", "VBZ", "VBZ"], 0.166816),
]


def check_stored_model(blob: bytes, sha256: str, feature_set: int,
                       rows: list[tuple[list[str], list[str], float]],
                       features_of: Callable[[CrfTagger, list[str]], list[list[str]]]) -> CrfTagger:
    """A model stored by an earlier version loads as that feature set, writes the same bytes back, gives
    each row's tags, attributes (``features_of``) and CRFsuite probability, and training that feature set
    on TINY still makes that very model."""
    assert hashlib.sha256(blob).hexdigest() == sha256
    tagger = CrfTagger.from_bytes(blob)
    assert tagger.feature_set == feature_set
    assert tagger.to_bytes() == blob
    for words, tags, probability in rows:
        assert tagger.tag(words) == tags
        assert tagger.features(words) == features_of(tagger, words)
        # any change to the attributes the model sees moves this probability
        tagger._tagger.set(tagger.features(words))
        assert tagger._tagger.probability(tags) == pytest.approx(probability, abs=1e-6)
    assert CrfTagger.train(TINY, iterations=10, feature_set=feature_set).to_bytes() == blob
    return tagger


def test_a_stored_feature_set_1_model_tags_exactly_as_before() -> None:
    tagger = check_stored_model(STORED_V1, STORED_V1_SHA256, 1, STORED_V1_TAGS,
                                lambda _, words: sentence_features(words))
    assert tagger.lexicon is None


def test_new_models_use_feature_set_4_and_round_trip(sample_tagger: CrfTagger,
                                                      dev_sents: TaggedSentences) -> None:
    assert FEATURE_SET == 4 and sample_tagger.feature_set == 4 and sample_tagger.lexicon is not None
    data = sample_tagger.to_bytes()
    assert struct.unpack_from("<16sHH", data) == (MAGIC, FORMAT_VERSION, 4)
    restored = CrfTagger.from_bytes(data)
    assert restored.to_bytes() == data and restored.feature_set == 4
    assert restored.lexicon is not None and restored.lexicon.classes == sample_tagger.lexicon.classes
    assert restored.clusters is not None and restored.clusters.table == package_clusters().table
    words = [[w for w, _ in sentence] for sentence in dev_sents]
    assert restored.tag_many(words) == sample_tagger.tag_many(words)
    lexicon = restored.lexicon
    v3 = sentence_features_v3(words[0], lexicon.classes_of(words[0]), lexicon.lower_classes_of(words[0]))
    clusters = package_clusters().features(words[0])
    assert restored.features(words[0]) == [own + extra for own, extra in zip(v3, clusters)]
    assert pickle.loads(pickle.dumps(restored)).to_bytes() == data


def test_feature_set_2_features() -> None:
    words = ["The", "zebras", "ran"]
    features = sentence_features_v2(words, ["DT|NNP", None, "VBD"])
    v1 = sentence_features(words)
    assert features[0] == v1[0] + ["amb=DT|NNP"] and features[2] == v1[2] + ["amb=VBD"]
    # an unknown word keeps its spelling and context, not its identity; longer suffixes of a long word
    assert features[1] == [f for f in v1[1] if not f.startswith(("w=", "w-1|w=", "w|w+1="))] + \
        ["s5=ebras", "amb=<unk>"]
    assert "w+1=zebras" in features[0] and "w|w+1=the|zebras" in features[0]
    assert sentence_features_v2(["Unknowable"], ["JJ"])[0][-3:] == ["s5=wable", "s6=owable", "amb=JJ"]


def test_training_tokens_get_their_class_from_other_folds_only() -> None:
    """A training token's ambiguity class must not see its own tag, or the CRF learns to trust it."""
    from clparse.tag.crf import LEXICON_BLOCK, LEXICON_FOLDS

    n = LEXICON_BLOCK * LEXICON_FOLDS
    # "own" occurs in the first block only (fold 0): unknown to the other folds
    sentences = [[("own", "NN"), ("run", "VB" if i % 2 else "NN")] if i < LEXICON_BLOCK
                 else [("x", "DT"), ("run", "VBD")] for i in range(n)]
    classes = Lexicon.held_out_classes(sentences)
    assert all(c[0] is None for c in classes[:LEXICON_BLOCK])  # never its own fold's tags
    assert all(c[1] == "VBD" for c in classes[:LEXICON_BLOCK])  # NN and VB came from fold 0 only
    assert all(c == ["DT", "NN|VB|VBD"] for c in classes[LEXICON_BLOCK:])
    # the stored lexicon, used on new text, has the classes from all of training
    assert Lexicon.build(sentences).classes == {"own": "NN", "run": "NN|VB|VBD", "x": "DT"}


def _v2_envelope(lexicon: bytes, model: bytes) -> bytes:
    payload = struct.pack("<I", len(lexicon)) + lexicon + model
    return HEADER.pack(MAGIC, FORMAT_VERSION, 2, hashlib.sha256(payload).digest()) + payload


def test_bad_lexicons_are_a_configuration_error(tiny_model: bytes) -> None:
    crf = tiny_model[HEADER.size:]
    good = Lexicon({"dog": "NN"}).to_bytes()
    assert CrfTagger.from_bytes(_v2_envelope(good, crf)).lexicon.classes == {"dog": "NN"}  # type: ignore[union-attr]
    bad = {"not json": (b"{[", "not JSON"), "not pairs": (json.dumps({"dog": "NN"}).encode(), "pairs"),
           "empty class": (b'[["dog",""]]', "pairs"), "non-ascii": ("[]\u00e9".encode(), "not JSON")}
    for name, (lexicon, message) in bad.items():
        with pytest.raises(ConfigurationError, match=message):
            CrfTagger.from_bytes(_v2_envelope(lexicon, crf))
    payload = struct.pack("<I", len(crf) + 100) + crf  # a lexicon size past the end
    header = HEADER.pack(MAGIC, FORMAT_VERSION, 2, hashlib.sha256(payload).digest())
    with pytest.raises(ConfigurationError, match="lexicon runs past the end"):
        CrfTagger.from_bytes(header + payload)
    with pytest.raises(ConfigurationError, match="feature set must be one of"):
        CrfTagger.train(TINY, feature_set=FEATURE_SET + 1)


def test_iteration_callback_counts_iterations_and_changes_no_byte() -> None:
    """``on_iteration`` (prepare's tagger progress bar) hears iterations 1, 2, ... and the model is the
    same bytes as without it."""
    sentences = [[("The", "DT"), ("dog", "NN"), ("barked", "VBD")],
                 [("A", "DT"), ("cat", "NN"), ("sat", "VBD")], [("Dogs", "NNS"), ("bark", "VBP")]] * 5
    heard: list[int] = []
    with_callback = CrfTagger.train(sentences, iterations=12, on_iteration=heard.append)
    assert heard == list(range(1, len(heard) + 1)) and 1 <= len(heard) <= 12
    assert with_callback.to_bytes() == CrfTagger.train(sentences, iterations=12).to_bytes()
