"""A small neural POS tagger, run in numpy: the second opinion beside the CRF (docs/tagger.md).

Each word is its lower-cased form's embedding (words seen at least twice in training; others share
``<unk>``) joined to a character BiLSTM's last states over ``<bow> w o r d <eow>`` and, in a net trained
since 2026-11-29, to embeddings of its Brown cluster and of the cluster's 6- and 10-bit prefixes
(:mod:`clparse.tag.clusters`: what kind of word an unknown word is, from far more text than GUM's); a
two-layer BiLSTM reads the sentence, and a softmax per word gives every tag's probability. It is trained
with PyTorch (:mod:`clparse.tag.net_train`, the ``clparse[neural]`` extra), but a stored net needs only
numpy to run: the weights are plain float32 arrays behind a JSON header, never a pickle.

Gates follow PyTorch's LSTM (input, forget, cell, output; one bias per gate, the sum of its two), so a
net computes here what it computed there, up to float rounding (a test holds the two within 1e-5).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from clparse.errors import ConfigurationError
from clparse.store.net_header import FORMAT, FORMAT_CLUSTERS, MAGIC
from clparse.store.net_header import HEADER as _HEADER
from clparse.tag.clusters import WordClusters

PAD, UNK, BOW, EOW = 0, 1, 2, 3  # the first rows of the word and character tables
#: The arrays of a net, in stored order: embeddings, the character BiLSTM (forward, backward), the two
#: sentence layers (each forward, backward), the output layer. An LSTM is (W_ih, W_hh, bias).
LSTMS = ("char_f", "char_b", "l0_f", "l0_b", "l1_f", "l1_b")
ARRAYS = ("words", "chars", *(f"{lstm}_{part}" for lstm in LSTMS for part in ("ih", "hh", "bias")),
          "out_w", "out_b")
#: A net that reads word clusters has these tables too (rows: WordClusters.net_rows), after ARRAYS.
CLUSTER_ARRAYS = ("cluster_full", "cluster_6", "cluster_10")


@dataclass(frozen=True)
class NetVocabulary:
    """What maps a sentence to the net's inputs and its outputs to tags."""

    words: tuple[str, ...]  # lower-cased; rows 0 and 1 are <pad> and <unk>
    chars: tuple[str, ...]  # rows 0-3 are <pad>, <unk>, <bow>, <eow>
    tags: tuple[str, ...]

    def word_ids(self, words: Sequence[str], index: dict[str, int]) -> np.ndarray:
        return np.array([index.get(w.lower(), UNK) for w in words], dtype=np.int64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow for large |x|


def _lstm(inputs: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray,
          reverse: bool) -> np.ndarray:
    """One direction of an LSTM over one sequence (T × in): every step's hidden state (T × hidden)."""
    steps, hidden = inputs.shape[0], w_hh.shape[1]
    projected = inputs @ w_ih.T + bias  # the input's share of every step's gates, at once
    h = np.zeros(hidden)
    c = np.zeros(hidden)
    out = np.empty((steps, hidden))
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        gates = projected[t] + w_hh @ h
        i, f, g, o = (gates[k * hidden:(k + 1) * hidden] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        out[t] = h
    return out


def _lstm_last(inputs: np.ndarray, lengths: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
               bias: np.ndarray, reverse: bool) -> np.ndarray:
    """One direction of an LSTM over a batch of padded sequences (B × L × in): each sequence's final
    hidden state (B × hidden), after its last element (forward) or its first (backward). Padding never
    enters a state: a step past a sequence's end leaves it as it was."""
    batch, longest = inputs.shape[:2]
    hidden = w_hh.shape[1]
    projected = inputs @ w_ih.T + bias
    h = np.zeros((batch, hidden))
    c = np.zeros((batch, hidden))
    for t in (range(longest - 1, -1, -1) if reverse else range(longest)):
        gates = projected[:, t] + h @ w_hh.T
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        new_c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        new_h = _sigmoid(o) * np.tanh(new_c)
        inside = (t < lengths)[:, None]
        c = np.where(inside, new_c, c)
        h = np.where(inside, new_h, h)
    return h


_CONTROLLER: Any = None


def _one_blas_thread() -> Any:
    """The BLAS on one thread while a sentence runs: its products are small (800 × 200 per step), and
    threads woken for each of them cost more than they give, ten times more beside another busy process
    (230 against 3,100 tokens/s, measured). threadpoolctl finds the BLAS numpy loaded, once."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


class TaggerNet:
    """A trained net: :meth:`probabilities` of every tag for every word of a sentence."""

    def __init__(self, vocabulary: NetVocabulary, arrays: dict[str, np.ndarray],
                 clusters: WordClusters | None = None) -> None:
        self.names = ARRAYS + (CLUSTER_ARRAYS if clusters is not None else ())
        missing = [name for name in self.names if name not in arrays]
        if missing:
            raise ConfigurationError(f"a tagger net needs the arrays {', '.join(missing)}")
        self.vocabulary = vocabulary
        self.clusters = clusters  # the word clusters it reads, its own copy (None: a net without them)
        # copied: a net is a value, whatever else holds the arrays it was made from
        self.arrays = {name: np.array(arrays[name], dtype=np.float32) for name in self.names}
        # computed in float64: the same numbers on every machine numpy runs on, whatever its BLAS's
        # float32 paths do
        self._weights = {name: a.astype(np.float64) for name, a in self.arrays.items()}
        self._digest: str | None = None  # the SHA-256 of its bytes (hex), once asked for
        self._word_index = {w: i for i, w in enumerate(vocabulary.words)}
        self._char_index = {ch: i for i, ch in enumerate(vocabulary.chars)}
        self._check_shapes()

    def _check_shapes(self) -> None:
        a = self.arrays
        v = self.vocabulary
        if a["words"].shape[0] != len(v.words) or a["chars"].shape[0] != len(v.chars) or \
                a["out_w"].shape[0] != len(v.tags) or a["out_b"].shape != (len(v.tags),):
            raise ConfigurationError("a tagger net's tables do not match its vocabulary")
        for lstm in LSTMS:
            w_ih, w_hh, bias = (a[f"{lstm}_{part}"] for part in ("ih", "hh", "bias"))
            hidden = w_hh.shape[1]
            gates = 4 * hidden
            if w_hh.shape != (gates, hidden) or w_ih.shape[0] != gates or bias.shape != (gates,):
                raise ConfigurationError(f"a tagger net's LSTM {lstm} has inconsistent shapes")
        char_out = 2 * a["char_f_hh"].shape[1]
        cluster_in = 0
        if self.clusters is not None:
            rows = self.clusters.net_table_rows
            if any(a[name].ndim != 2 or a[name].shape[0] != n for name, n in zip(CLUSTER_ARRAYS, rows)):
                raise ConfigurationError("a tagger net's cluster tables do not match its word clusters")
            cluster_in = sum(a[name].shape[1] for name in CLUSTER_ARRAYS)
        if a["char_f_ih"].shape[1] != a["chars"].shape[1] or \
                a["l0_f_ih"].shape[1] != a["words"].shape[1] + char_out + cluster_in or \
                a["l1_f_ih"].shape[1] != 2 * a["l0_f_hh"].shape[1] or \
                a["out_w"].shape[1] != 2 * a["l1_f_hh"].shape[1]:
            raise ConfigurationError("a tagger net's layers do not fit together")

    @property
    def tags(self) -> tuple[str, ...]:
        return self.vocabulary.tags

    @property
    def digest(self) -> str:
        """The SHA-256 (hex) its bytes carry in their header: which net this is (a tag chooser is fitted on
        one net's taggings, :data:`clparse.store.reading.tagger_name`)."""
        if self._digest is None:
            self._digest = _HEADER.unpack_from(self.to_bytes())[3].hex()
        return self._digest

    def _char_states(self, words: Sequence[str]) -> np.ndarray:
        """Each word's character BiLSTM output (len(words) × 2 char hidden), each distinct word once."""
        unique = list(dict.fromkeys(words))
        ids = [[BOW, *(self._char_index.get(ch, UNK) for ch in word), EOW] for word in unique]
        lengths = np.array([len(row) for row in ids])
        padded = np.zeros((len(ids), int(lengths.max())), dtype=np.int64)
        for row, chars in zip(padded, ids):
            row[:len(chars)] = chars
        w = self._weights
        embedded = w["chars"][padded]
        states = np.concatenate([
            _lstm_last(embedded, lengths, w["char_f_ih"], w["char_f_hh"], w["char_f_bias"], reverse=False),
            _lstm_last(embedded, lengths, w["char_b_ih"], w["char_b_hh"], w["char_b_bias"], reverse=True)],
            axis=1)
        position = {word: k for k, word in enumerate(unique)}
        return states[[position[word] for word in words]]

    def probabilities(self, words: Sequence[str]) -> np.ndarray:
        """P(tag | sentence) for each word: len(words) × len(tags), rows summing to 1."""
        if not words:
            return np.zeros((0, len(self.tags)))
        with _one_blas_thread():
            return self._probabilities(words)

    def _probabilities(self, words: Sequence[str]) -> np.ndarray:
        w = self._weights
        parts = [w["words"][self.vocabulary.word_ids(words, self._word_index)], self._char_states(words)]
        if self.clusters is not None:
            parts += [w[name][rows] for name, rows in zip(CLUSTER_ARRAYS, self.clusters.net_rows(words))]
        x = np.concatenate(parts, axis=1)
        for layer in ("l0", "l1"):
            x = np.concatenate([
                _lstm(x, w[f"{layer}_f_ih"], w[f"{layer}_f_hh"], w[f"{layer}_f_bias"], reverse=False),
                _lstm(x, w[f"{layer}_b_ih"], w[f"{layer}_b_hh"], w[f"{layer}_b_bias"], reverse=True)], axis=1)
        logits = x @ w["out_w"].T + w["out_b"]
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def to_bytes(self) -> bytes:
        """The net as bytes: a header with the SHA-256 of the rest, a JSON header (vocabulary, array
        shapes), then every array as little-endian float32, in :data:`ARRAYS` order. A net reading word
        clusters is format 2: its cluster tables follow (:data:`CLUSTER_ARRAYS`), then its word clusters
        (:meth:`WordClusters.to_bytes`, their length in the JSON header); a net without is format 1, the
        same bytes as before clusters."""
        meta: dict[str, object] = {
            "words": list(self.vocabulary.words), "chars": list(self.vocabulary.chars),
            "tags": list(self.vocabulary.tags),
            "arrays": [[name, list(self.arrays[name].shape)] for name in self.names]}
        table = b""
        if self.clusters is not None:
            table = self.clusters.to_bytes()
            meta["clusters"] = len(table)
        text = json.dumps(meta, ensure_ascii=False).encode("utf-8")
        body = text + b"".join(self.arrays[name].astype("<f4").tobytes() for name in self.names) + table
        version = FORMAT if self.clusters is None else FORMAT_CLUSTERS
        return _HEADER.pack(MAGIC, version, 0, hashlib.sha256(body).digest(), len(text)) + body

    @classmethod
    def from_bytes(cls, data: bytes) -> TaggerNet:
        """A net from :meth:`to_bytes`; anything else (damaged, truncated, another format) is a
        :class:`ConfigurationError` naming what is wrong."""
        data = bytes(data)
        if len(data) < _HEADER.size:
            raise ConfigurationError("the tagger net's bytes are too short to hold its header")
        magic, version, _, digest, text_length = _HEADER.unpack_from(data)
        if magic != MAGIC:
            raise ConfigurationError("not a clparse tagger net (its first bytes are not the net's mark)")
        if version not in (FORMAT, FORMAT_CLUSTERS):
            raise ConfigurationError(f"tagger net format {version}; this clparse reads formats {FORMAT} and "
                                     f"{FORMAT_CLUSTERS}")
        body = data[_HEADER.size:]
        if hashlib.sha256(body).digest() != digest:
            raise ConfigurationError("the tagger net's bytes fail their SHA-256: damaged")
        try:
            meta = json.loads(body[:text_length].decode("utf-8"))
            shapes = [(str(name), tuple(int(n) for n in shape)) for name, shape in meta["arrays"]]
            vocabulary = NetVocabulary(tuple(map(str, meta["words"])), tuple(map(str, meta["chars"])),
                                       tuple(map(str, meta["tags"])))
            table_length = int(meta["clusters"]) if version == FORMAT_CLUSTERS else 0
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"the tagger net's header is not readable: {exc}") from None
        names = ARRAYS + (CLUSTER_ARRAYS if version == FORMAT_CLUSTERS else ())
        if [name for name, _ in shapes] != list(names):
            raise ConfigurationError("the tagger net's arrays are not the ones this clparse knows")
        if any(len(shape) != (1 if name in ("out_b", *(f"{lstm}_bias" for lstm in LSTMS)) else 2)
               or min(shape) < 1 for name, shape in shapes):
            raise ConfigurationError("the tagger net's header gives an array a shape no net has")
        arrays = {}
        offset = text_length
        for name, shape in shapes:
            size = 4 * int(np.prod(shape))
            if offset + size > len(body):
                raise ConfigurationError("the tagger net's bytes end before its arrays do")
            arrays[name] = np.frombuffer(body, dtype="<f4", count=size // 4, offset=offset).reshape(shape)
            offset += size
        clusters = None
        if version == FORMAT_CLUSTERS:
            if table_length < 1 or offset + table_length != len(body):
                raise ConfigurationError("the tagger net's word clusters are not where its header says")
            try:
                clusters = WordClusters.from_bytes(body[offset:])
            except ConfigurationError as exc:
                raise ConfigurationError("the tagger net's " + str(exc).removeprefix("malformed ")) from None
            offset += table_length
        if offset != len(body):
            raise ConfigurationError("the tagger net's bytes go on after its arrays")
        net = cls(vocabulary, arrays, clusters)
        net._digest = digest.hex()
        return net
