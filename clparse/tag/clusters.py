"""Brown word clusters of a large English corpus: what the CRF's feature set 4 knows of words GUM lacks.

A third of the CRF's errors fell on words it never saw in training (85 % right on them, 97 % elsewhere),
and clusters of GUM train's own text did not help (docs/tagger.md): they know only GUM's words. These
clusters come from far more text. Brown clustering puts words that occur in similar contexts in one
leaf of a binary tree; a word's path from the root is a bit string, and a prefix of it is a coarser
cluster, so ``ran`` and ``walked`` share a leaf and ``told`` shares their first 8 bits.

The table is spacy-lookups-data's ``en_lexeme_cluster`` (MIT licence; about 1,000 clusters, copied there from
spaCy v2.2's English models): 1,000,001 word forms, of which 190,129 have a cluster (the rest hold 0,
none). spaCy stores each path reversed as an integer, so the path's first k bits are the integer's k
lowest bits (``cluster & (2**k - 1)``). Only the forms with a cluster are kept.

A trained model carries its own copy of the table (:meth:`WordClusters.to_bytes`), so
it tags the same on any machine whatever spacy-lookups-data is installed there; only training a new
model reads the package (:func:`package_clusters`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import struct
import zlib
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import numpy as np

from clparse.errors import ConfigurationError

#: The path prefixes a word is known by (bits): from a few broad classes to near the leaf.
PREFIXES = (4, 6, 10, 20)
PREFIX_6, PREFIX_10 = (1 << 6) - 1, (1 << 10) - 1  # the tagger net's two coarser cluster inputs
PACKAGE = "spacy_lookups_data"
TABLE = "data/en_lexeme_cluster.json.gz"
NO_CLUSTER = "bc=<none>"


class WordClusters:
    """Word form -> Brown cluster (the path as spaCy stores it, reversed into an integer)."""

    def __init__(self, table: dict[str, int]) -> None:
        self.table = table
        self._bytes: bytes | None = None  # to_bytes(), made once: every model trained with the table holds it
        self._leaves: dict[int, int] | None = None

    def cluster_of(self, word: str) -> int | None:
        """The cluster of the word as written, else of its lower-cased or capitalised form (a sentence's
        first word, a heading in capitals); None for a word the table lacks."""
        for form in (word, word.lower(), word.capitalize()):
            found = self.table.get(form)
            if found is not None:
                return found
        return None

    def features(self, words: Sequence[str]) -> list[list[str]]:
        """Each word's CRFsuite attributes: its path's prefixes of :data:`PREFIXES` bits, or ``bc=<none>``."""
        out = []
        for word in words:
            found = self.cluster_of(word)
            out.append([NO_CLUSTER] if found is None
                       else [f"bc{bits}={found & ((1 << bits) - 1)}" for bits in PREFIXES])
        return out

    def net_rows(self, words: Sequence[str]) -> tuple[list[int], list[int], list[int]]:
        """The tagger net's cluster inputs (:mod:`clparse.tag.net`): each word's row in a table of the
        clusters (:attr:`leaves`), of its path's first 6 bits (the bits + 1) and first 10 bits (the bits +
        1); row 0 is a word without a cluster. Sizes: :attr:`leaves` + 1, 65, 1025 rows."""
        leaves = self.leaves
        found = [self.cluster_of(word) for word in words]
        return ([0 if c is None else leaves[c] for c in found],
                [0 if c is None else (c & PREFIX_6) + 1 for c in found],
                [0 if c is None else (c & PREFIX_10) + 1 for c in found])

    @property
    def net_table_rows(self) -> tuple[int, int, int]:
        """The rows of the net's three cluster tables, in :meth:`net_rows`' order."""
        return len(self.leaves) + 1, PREFIX_6 + 2, PREFIX_10 + 2

    @property
    def leaves(self) -> dict[int, int]:
        """Each cluster's row in the net's table of whole clusters: 1, 2, ... in the clusters' order."""
        if self._leaves is None:
            self._leaves = {c: k for k, c in enumerate(sorted(set(self.table.values())), start=1)}
        return self._leaves

    def to_bytes(self) -> bytes:
        """The table as bytes, about 0.9 MB for the installed one: zlib of the count of words (uint32), each
        word's cluster (uint32, in the words' sorted order), then the sorted words, UTF-8, one a line. The
        same table gives the same bytes; it is not to be changed once written."""
        if self._bytes is None:
            words = sorted(self.table)
            if any(not word or "\n" in word for word in words):
                raise ConfigurationError("a word-cluster table's words must be non-empty and on one line")
            clusters = [self.table[word] for word in words]
            if any(not 0 < cluster < 2 ** 32 for cluster in clusters):
                raise ConfigurationError("a word-cluster table's clusters must be from 1 to 2^32 - 1")
            raw = (struct.pack("<I", len(words)) + np.array(clusters, dtype="<u4").tobytes()
                   + "\n".join(words).encode("utf-8", "surrogatepass"))
            self._bytes = zlib.compress(raw, 6)
            _remember(self)
        return self._bytes

    @classmethod
    def from_bytes(cls, data: bytes) -> WordClusters:
        """A table from :meth:`to_bytes`; any damage is one :class:`ConfigurationError` line. Decoded once
        per process for the same bytes: a run's CRF and net, and every parser opened on it, share one."""
        data = bytes(data)
        digest = hashlib.sha256(data).digest()
        known = _TABLES.get(digest)
        if known is not None and known._bytes == data:
            return known
        table = _decoded(data)
        table._bytes = data  # written back as read, whatever zlib this machine has
        _remember(table)
        return table


# Tables decoded or written in this process, by the SHA-256 of their bytes; the last few only.
_TABLES: dict[bytes, WordClusters] = {}
_KEPT_TABLES = 4
# Far more than any table needs (the installed one: 3.5 MB): bytes that inflate past it are refused.
MAX_TABLE_BYTES = 256 * 2 ** 20


def _remember(table: WordClusters) -> None:
    assert table._bytes is not None
    _TABLES[hashlib.sha256(table._bytes).digest()] = table
    while len(_TABLES) > _KEPT_TABLES:
        del _TABLES[next(iter(_TABLES))]


def _decoded(data: bytes) -> WordClusters:
    def fail(problem: str) -> ConfigurationError:
        return ConfigurationError(f"malformed word-cluster table: {problem}")

    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(data, MAX_TABLE_BYTES)
    except zlib.error as exc:
        raise fail(f"not zlib data ({exc})") from None
    if inflate.unconsumed_tail or not inflate.eof:
        raise fail(f"it inflates past {MAX_TABLE_BYTES:,} bytes or is cut short")
    if len(raw) < 4:
        raise fail("too short for its count of words")
    (count,) = struct.unpack_from("<I", raw)
    if len(raw) < 4 + 4 * count:
        raise fail(f"too short for {count:,} clusters")
    clusters = np.frombuffer(raw, dtype="<u4", count=count, offset=4)
    try:
        text = raw[4 + 4 * count:].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise fail(f"its words are not UTF-8 ({exc})") from None
    words = text.split("\n") if text else []
    if len(words) != count or not all(words) or bool(np.any(clusters == 0)):
        raise fail(f"{count:,} words and clusters expected, each word non-empty and each cluster positive")
    if any(a >= b for a, b in zip(words, words[1:])):
        raise fail("its words are not in order, or one is there twice")
    return WordClusters(dict(zip(words, clusters.tolist())))


@lru_cache(maxsize=1)
def package_clusters() -> WordClusters:
    """The English table of the installed spacy-lookups-data, the words with a cluster only."""
    try:
        source = resources.files(PACKAGE).joinpath(TABLE)
        with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
            table = json.load(text)
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ConfigurationError(
            f"the taggers' word clusters come from spacy-lookups-data, which is not installed or lacks "
            f"{TABLE} ({exc}): pip install spacy-lookups-data") from exc
    except (OSError, EOFError, ValueError) as exc:  # a damaged install: bad gzip, bad JSON
        raise ConfigurationError(f"the installed spacy-lookups-data's {TABLE} cannot be read ({exc}): "
                                 "pip install --force-reinstall spacy-lookups-data") from exc
    if not isinstance(table, dict):
        raise ConfigurationError(f"the installed spacy-lookups-data's {TABLE} is not a table of words")
    return WordClusters({word: cluster for word, cluster in table.items()
                         if isinstance(cluster, int) and 0 < cluster < 2 ** 32 and word and "\n" not in word})
