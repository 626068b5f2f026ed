"""Feature set 4 of the CRF tagger: Brown word clusters (clparse/tag/clusters.py). Hand-worked prefixes,
the lookup order, the stored table's bytes and their checks, the installed table, and that a model tags
with the copy it carries, whatever table is installed."""

from __future__ import annotations

import hashlib
import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clparse.errors import ConfigurationError
from clparse.tag import clusters as clusters_module
from clparse.tag.clusters import NO_CLUSTER, WordClusters, package_clusters
from clparse.tag.crf import FORMAT_VERSION, MAGIC, CrfTagger, sentence_features_v3

from tests.test_crf_tagger import TINY

# spaCy keeps a Brown path reversed as an integer: path 0101 0101 (root first) is 0b10101010 = 170
SMALL = WordClusters({"ran": 170, "walked": 170, "told": 20138, "Paris": 37, "the": 11})


def test_prefixes_are_the_paths_first_bits() -> None:
    assert SMALL.features(["ran"]) == [["bc4=10", "bc6=42", "bc10=170", "bc20=170"]]
    # told shares its first 8 bits with ran (20138 = 0b100111010101010): 10, 42, then apart
    assert SMALL.features(["told"]) == [["bc4=10", "bc6=42", "bc10=682", "bc20=20138"]]
    assert SMALL.features(["xyzzy"]) == [[NO_CLUSTER]]


def test_a_word_is_looked_up_as_written_then_lower_cased_then_capitalised() -> None:
    table = WordClusters({"Apple": 5, "apple": 9, "paris": 3, "Rome": 7})
    assert table.cluster_of("Apple") == 5  # as written first
    assert table.cluster_of("APPLE") == 9  # lower-cased
    assert table.cluster_of("PARIS") == 3
    assert table.cluster_of("ROME") == 7  # capitalised: a heading in capitals
    assert table.cluster_of("rome") == 7
    assert table.cluster_of("Oslo") is None


WORDS = st.text(st.characters(blacklist_characters="\n"), min_size=1, max_size=8)


@given(st.dictionaries(WORDS, st.integers(1, 2**32 - 1), max_size=20))
def test_the_table_round_trips_through_its_bytes(table: dict[str, int]) -> None:
    clusters = WordClusters(table)
    data = clusters.to_bytes()
    assert clusters_module._decoded(data).table == table  # decoded afresh, not the cached table
    assert WordClusters(dict(reversed(list(table.items())))).to_bytes() == data  # order does not matter


def test_a_table_read_or_written_once_is_shared() -> None:
    table = WordClusters({"shared": 3, "once": 5})
    assert WordClusters.from_bytes(table.to_bytes()) is table
    again = WordClusters.from_bytes(table.to_bytes())
    assert again.to_bytes() == table.to_bytes()


def test_a_table_that_cannot_be_written_is_refused() -> None:
    for table, says in (({"a\nb": 1}, "one line"), ({"": 1}, "non-empty"), ({"a": 0}, "from 1"),
                        ({"a": 2**32}, "from 1")):
        with pytest.raises(ConfigurationError, match=says):
            WordClusters(table).to_bytes()


def packed(words: list[str], clusters: list[int], count: int | None = None) -> bytes:
    raw = (struct.pack("<I", len(words) if count is None else count)
           + struct.pack(f"<{len(clusters)}I", *clusters) + "\n".join(words).encode("utf-8"))
    return zlib.compress(raw)


def test_a_damaged_table_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert WordClusters.from_bytes(packed(["a", "b"], [1, 2])).table == {"a": 1, "b": 2}  # the layout
    bad = {
        "not zlib": (b"not zlib", "not zlib"),
        "cut short": (packed(["a", "b"], [1, 2])[:-3], "cut short"),
        "no count": (zlib.compress(b"ab"), "count"),
        "too few clusters": (packed(["a"], [], 1), "clusters"),
        "a zero": (packed(["a", "b"], [1, 0]), "positive"),
        "an empty word": (packed(["", "b"], [1, 2]), "empty"),
        "more words": (packed(["a", "b", "c"], [1, 2], 2), "expected"),
        "out of order": (packed(["b", "a"], [1, 2]), "order"),
        "twice": (packed(["a", "a"], [1, 2]), "twice"),
        "not utf-8": (zlib.compress(struct.pack("<II", 1, 1) + b"\xff"), "UTF-8"),
    }
    for name, (data, says) in bad.items():
        with pytest.raises(ConfigurationError, match="malformed word-cluster table: .*" + says):
            WordClusters.from_bytes(data)
    monkeypatch.setattr(clusters_module, "MAX_TABLE_BYTES", 100)  # a small blob that inflates to much more
    with pytest.raises(ConfigurationError, match="inflates past"):
        WordClusters.from_bytes(packed([f"w{i:05d}" for i in range(50)], list(range(1, 51))))


def test_the_installed_table() -> None:
    clusters = package_clusters()
    assert len(clusters.table) > 100_000  # spacy-lookups-data 1.0.5: 190,129 words with a cluster
    assert clusters.cluster_of("ran") == clusters.cluster_of("walked") == 170
    assert clusters.cluster_of("xyzzy") is None
    assert all(cluster > 0 for cluster in clusters.table.values())


def test_a_feature_set_4_model_tags_with_its_own_table() -> None:
    tagger = CrfTagger.train(TINY, iterations=10, clusters=SMALL)
    assert tagger.feature_set == 4 and tagger.clusters is not None and tagger.clusters.table == SMALL.table
    data = tagger.to_bytes()
    restored = CrfTagger.from_bytes(data)
    assert restored.clusters is not None and restored.clusters.table == SMALL.table  # not the installed one
    assert restored.to_bytes() == data
    words = ["the", "dog", "ran", "to", "Paris"]
    assert tagger.lexicon is not None
    v3 = sentence_features_v3(words, tagger.lexicon.classes_of(words), tagger.lexicon.lower_classes_of(words))
    assert restored.features(words) == [own + extra for own, extra in zip(v3, SMALL.features(words))]
    assert restored.tag(words) == tagger.tag(words)
    # the same sentences and table give the same bytes; another table, another model
    assert CrfTagger.train(TINY, iterations=10, clusters=SMALL).to_bytes() == data
    assert CrfTagger.train(TINY, iterations=10, clusters=WordClusters({"ran": 3})).to_bytes() != data


def test_word_clusters_are_feature_set_4s_only() -> None:
    with pytest.raises(ConfigurationError, match="feature set 4's"):
        CrfTagger.train(TINY, iterations=5, feature_set=3, clusters=SMALL)


def forged(data: bytes, payload: bytes) -> bytes:
    """``data``'s header over another payload, with the right SHA-256: damage the hash cannot catch."""
    header = struct.Struct("<16sHH32s")
    return header.pack(MAGIC, FORMAT_VERSION, 4, hashlib.sha256(payload).digest()) + payload


def test_a_model_with_damaged_clusters_is_one_error() -> None:
    data = CrfTagger.train(TINY, iterations=5, clusters=SMALL).to_bytes()
    payload = data[struct.calcsize("<16sHH32s"):]
    (lexicon_size,) = struct.unpack_from("<I", payload)
    start = 4 + lexicon_size
    (size,) = struct.unpack_from("<I", payload, start)
    table = payload[start + 4:start + 4 + size]
    nested = zlib.compress(b"[" * 100_000)  # nothing forged escapes as another exception
    for damaged in (table[:-2] + b"xx", nested):
        swapped = payload[:start] + struct.pack("<I", len(damaged)) + damaged + payload[start + 4 + size:]
        with pytest.raises(ConfigurationError, match="malformed CRF tagger model: its word-cluster table"):
            CrfTagger.from_bytes(forged(data, swapped))
    with pytest.raises(ConfigurationError, match="too short for its word clusters"):
        CrfTagger.from_bytes(forged(data, payload[:start + 2]))


def test_a_cluster_section_past_the_end_is_refused() -> None:
    tagger = CrfTagger.train(TINY, iterations=5, clusters=SMALL)
    data = tagger.to_bytes()
    header = struct.Struct("<16sHH32s")
    payload = bytearray(data[header.size:])
    (lexicon_size,) = struct.unpack_from("<I", payload)
    struct.pack_into("<I", payload, 4 + lexicon_size, len(payload))  # the clusters' size: past the end
    forged = header.pack(MAGIC, FORMAT_VERSION, 4, hashlib.sha256(payload).digest()) + bytes(payload)
    with pytest.raises(ConfigurationError, match="word clusters run past the end"):
        CrfTagger.from_bytes(forged)
