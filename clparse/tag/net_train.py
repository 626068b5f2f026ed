"""Training the tagger net (:mod:`clparse.tag.net`) with PyTorch: the ``clparse[neural]`` extra.

Only training needs PyTorch; the trained weights leave it as numpy arrays (:meth:`TaggerNet.to_bytes`).
The recipe (docs/tagger.md, "A second opinion"): Adam (lr 2e-3, betas 0.9, 0.9), batches of 32 sentences
of about one length, dropout 0.33 on the inputs, between the layers and before the output, gradients
clipped at norm 5, and word dropout: a training word seen c times is read as ``<unk>`` with probability
0.25 / (0.25 + c), so the net learns what to do with words it has not seen. After every epoch the net is
scored on the dev sentences, if given, and the best epoch's weights are kept.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clparse.errors import ConfigurationError
from clparse.tag.clusters import WordClusters, package_clusters
from clparse.tag.crf import tagging_accuracy
from clparse.tag.net import BOW, CLUSTER_ARRAYS, EOW, UNK, NetVocabulary, TaggerNet

Tagged = Sequence[Sequence[tuple[str, str]]]
NEEDS_TORCH = ("training the tagger net needs PyTorch: pip install 'clparse[neural]' (a CPU build is "
               "enough)")


@dataclass(frozen=True)
class NetSettings:
    """The net's sizes and its training recipe (the defaults are what docs/tagger.md measured)."""

    epochs: int = 25
    seed: int = 1
    word_dim: int = 100
    char_dim: int = 50
    char_hidden: int = 50  # per direction
    hidden: int = 200  # per direction, both sentence layers
    dropout: float = 0.33
    word_dropout: float = 0.25
    learning_rate: float = 2e-3
    batch: int = 32
    min_word_count: int = 2  # rarer words are <unk> to the word table (the characters still see them)
    # each word's Brown cluster (clparse.tag.clusters, from spacy-lookups-data) as three more embeddings:
    # the cluster's, and its 6- and 10-bit prefixes'; False: the net of before 2026-11-29
    clusters: bool = True
    cluster_dims: tuple[int, int, int] = (50, 16, 32)

    def __post_init__(self) -> None:
        for name in ("epochs", "word_dim", "char_dim", "char_hidden", "hidden", "batch", "min_word_count"):
            if int(getattr(self, name)) < 1:
                raise ConfigurationError(f"the tagger net's {name} must be at least 1")
        if len(self.cluster_dims) != 3 or min(self.cluster_dims) < 1:
            raise ConfigurationError("the tagger net's cluster_dims must be three sizes of at least 1")
        if not 0 <= self.dropout < 1 or self.word_dropout < 0 or self.learning_rate <= 0:
            raise ConfigurationError("the tagger net's dropout must be in [0, 1), word dropout and learning "
                                     "rate positive")


@dataclass
class EpochResult:
    epoch: int
    loss: float  # mean cross-entropy per sentence batch, over the epoch
    dev_accuracy: float | None
    seconds: float


@dataclass
class NetTraining:
    net: TaggerNet
    epoch: int  # the epoch whose weights were kept
    dev_accuracy: float | None  # the kept epoch's
    epochs: list[EpochResult] = field(default_factory=list)
    seconds: float = 0.0
    model: Any = None  # the PyTorch model after the last epoch (the kept net is its weights if that was best)


def vocabulary_of(sentences: Tagged, settings: NetSettings) -> NetVocabulary:
    """The word table (lower-cased words seen ``min_word_count`` times), characters and tags of
    ``sentences``, each sorted, after the reserved rows."""
    counts = Counter(word.lower() for sentence in sentences for word, _ in sentence)
    words = ("<pad>", "<unk>", *sorted(w for w, c in counts.items() if c >= settings.min_word_count))
    chars = ("<pad>", "<unk>", "<bow>", "<eow>",
             *sorted({ch for sentence in sentences for word, _ in sentence for ch in word}))
    tags = tuple(sorted({tag for sentence in sentences for _, tag in sentence}))
    return NetVocabulary(words, chars, tags)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ConfigurationError(NEEDS_TORCH) from None
    return torch


def train_net(sentences: Tagged, dev: Tagged = (), settings: NetSettings = NetSettings(),
              on_epoch: Callable[[EpochResult], object] | None = None,
              should_stop: Callable[[], bool] = lambda: False) -> NetTraining | None:
    """Train a net on ``sentences`` ((word, tag) pairs); keep the epoch best on ``dev`` (the last without
    dev). None if ``should_stop`` said so between two batches: nothing half-trained is returned."""
    torch = _torch()
    sentences = [list(s) for s in sentences if s]
    if not sentences:
        raise ConfigurationError("no tagged sentences to train the tagger net on")
    vocabulary = vocabulary_of(sentences, settings)
    clusters = package_clusters() if settings.clusters else None
    model = _build(torch, vocabulary, settings, clusters)
    rng = random.Random(settings.seed)
    counts = Counter(word.lower() for sentence in sentences for word, _ in sentence)
    word_index = {w: i for i, w in enumerate(vocabulary.words)}
    char_index = {ch: i for i, ch in enumerate(vocabulary.chars)}
    tag_index = {t: i for i, t in enumerate(vocabulary.tags)}
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate, betas=(0.9, 0.9))
    loss_of = torch.nn.CrossEntropyLoss(ignore_index=-1)
    dev = [list(s) for s in dev if s]
    start = time.perf_counter()
    result: NetTraining | None = None
    history: list[EpochResult] = []
    for epoch in range(1, settings.epochs + 1):
        began = time.perf_counter()
        model.train()
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]) + rng.uniform(-2, 2))
        batches = [order[i:i + settings.batch] for i in range(0, len(order), settings.batch)]
        rng.shuffle(batches)
        total = 0.0
        for batch in batches:
            if should_stop():
                return None
            chosen = [sentences[i] for i in batch]
            words = [[w for w, _ in s] for s in chosen]
            ids = [[_dropped(word_index.get(w.lower(), UNK), counts[w.lower()], settings.word_dropout, rng)
                    for w in s] for s in words]
            inputs = _batch(torch, words, ids, char_index, clusters)
            gold = torch.nn.utils.rnn.pad_sequence(
                [torch.tensor([tag_index[t] for _, t in s]) for s in chosen], batch_first=True,
                padding_value=-1)
            logits = model(*inputs)
            loss = loss_of(logits.reshape(-1, len(vocabulary.tags)), gold.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total += float(loss.item())
        net = TaggerNet(vocabulary, _arrays(model), clusters)
        accuracy = net_accuracy(net, dev) if dev else None
        history.append(EpochResult(epoch, total / len(batches), accuracy, time.perf_counter() - began))
        if on_epoch is not None:
            on_epoch(history[-1])
        better = accuracy is None or result is None or accuracy > (result.dev_accuracy or 0.0)
        if better:
            result = NetTraining(net, epoch, accuracy)
    assert result is not None
    result.epochs = history
    result.seconds = time.perf_counter() - start
    result.model = model
    return result


def net_accuracy(net: TaggerNet, sentences: Tagged) -> float:
    """Share of tokens whose most probable tag under ``net`` is the given one (0 for no tokens)."""
    if not any(sentences):
        return 0.0
    return tagging_accuracy(lambda words: [net.tags[k] for k in net.probabilities(words).argmax(axis=1)],
                            sentences)


def _dropped(index: int, count: int, rate: float, rng: random.Random) -> int:
    """A known word read as <unk> with probability rate / (rate + count): rare words most often."""
    if index != UNK and rate > 0 and rng.random() < rate / (rate + count):
        return UNK
    return index


def _batch(torch: Any, words: list[list[str]], ids: list[list[int]],
           char_index: dict[str, int], clusters: WordClusters | None = None) -> tuple[Any, ...]:
    """A batch's tensors: word ids (B × T), lengths, each distinct word's characters (U × L) with their
    lengths, where each position's word is among them (B × T), and with ``clusters`` the three cluster
    rows of each position (3 tensors B × T, :meth:`WordClusters.net_rows`)."""
    pad = torch.nn.utils.rnn.pad_sequence
    unique: dict[str, int] = {}
    where = [torch.tensor([unique.setdefault(w, len(unique)) for w in s]) for s in words]
    chars = [torch.tensor([BOW, *(char_index.get(ch, UNK) for ch in w), EOW]) for w in unique]
    tensors = (pad([torch.tensor(s) for s in ids], batch_first=True), torch.tensor([len(s) for s in words]),
               pad(chars, batch_first=True), torch.tensor([len(c) for c in chars]),
               pad(where, batch_first=True))
    if clusters is None:
        return tensors
    rows = [clusters.net_rows(s) for s in words]
    return (*tensors, *(pad([torch.tensor(r[k]) for r in rows], batch_first=True) for k in range(3)))


def _build(torch: Any, vocabulary: NetVocabulary, settings: NetSettings,
           clusters: WordClusters | None = None) -> Any:
    nn = torch.nn
    pack = torch.nn.utils.rnn.pack_padded_sequence
    unpack = torch.nn.utils.rnn.pad_packed_sequence
    torch.manual_seed(settings.seed)

    class Net(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.words = nn.Embedding(len(vocabulary.words), settings.word_dim, padding_idx=0)
            self.chars = nn.Embedding(len(vocabulary.chars), settings.char_dim, padding_idx=0)
            self.char_lstm = nn.LSTM(settings.char_dim, settings.char_hidden, batch_first=True,
                                     bidirectional=True)
            self.drop = nn.Dropout(settings.dropout)
            cluster_in = 0
            if clusters is not None:  # made before the LSTM, so the seed draws in the same order each time
                sizes = clusters.net_table_rows
                self.cluster_full, self.cluster_6, self.cluster_10 = (
                    nn.Embedding(rows, dim) for rows, dim in zip(sizes, settings.cluster_dims))
                cluster_in = sum(settings.cluster_dims)
            self.lstm = nn.LSTM(settings.word_dim + 2 * settings.char_hidden + cluster_in, settings.hidden,
                                num_layers=2, batch_first=True, bidirectional=True, dropout=settings.dropout)
            self.out = nn.Linear(2 * settings.hidden, len(vocabulary.tags))

        def forward(self, word_ids: Any, lengths: Any, char_ids: Any, char_lengths: Any, where: Any,
                    *cluster_rows: Any) -> Any:
            packed = pack(self.chars(char_ids), char_lengths, batch_first=True, enforce_sorted=False)
            _, (last, _) = self.char_lstm(packed)
            spelled = torch.cat([last[0], last[1]], dim=-1)
            parts = [self.words(word_ids), spelled[where]]
            if cluster_rows:
                tables = (self.cluster_full, self.cluster_6, self.cluster_10)
                parts += [table(rows) for table, rows in zip(tables, cluster_rows)]
            x = self.drop(torch.cat(parts, dim=-1))
            states, _ = self.lstm(pack(x, lengths, batch_first=True, enforce_sorted=False))
            states, _ = unpack(states, batch_first=True)
            return self.out(self.drop(states))

    return Net()


def _arrays(model: Any) -> dict[str, np.ndarray]:
    """The model's weights under :data:`clparse.tag.net.ARRAYS`' names (each gate bias summed)."""
    # copies: .numpy() shares the live weights' memory, which the epochs after a kept one go on changing
    p = {name: value.detach().cpu().numpy().copy() for name, value in model.state_dict().items()}

    def lstm(prefix: str, layer: int, reverse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tail = f"_l{layer}{'_reverse' if reverse else ''}"
        return (p[f"{prefix}.weight_ih{tail}"], p[f"{prefix}.weight_hh{tail}"],
                p[f"{prefix}.bias_ih{tail}"] + p[f"{prefix}.bias_hh{tail}"])

    arrays = {"words": p["words.weight"], "chars": p["chars.weight"], "out_w": p["out.weight"],
              "out_b": p["out.bias"]}
    for name in CLUSTER_ARRAYS:
        if f"{name}.weight" in p:
            arrays[name] = p[f"{name}.weight"]
    sources = {"char_f": ("char_lstm", 0, False), "char_b": ("char_lstm", 0, True),
               "l0_f": ("lstm", 0, False), "l0_b": ("lstm", 0, True),
               "l1_f": ("lstm", 1, False), "l1_b": ("lstm", 1, True)}
    for name, (prefix, layer, reverse) in sources.items():
        arrays[f"{name}_ih"], arrays[f"{name}_hh"], arrays[f"{name}_bias"] = lstm(prefix, layer, reverse)
    return arrays


def torch_probabilities(training_model: Any, net: TaggerNet, words: Sequence[str]) -> np.ndarray:
    """What the PyTorch model says of one sentence (for tests: the numpy net must say the same)."""
    torch = _torch()
    word_index = {w: i for i, w in enumerate(net.vocabulary.words)}
    char_index = {ch: i for i, ch in enumerate(net.vocabulary.chars)}
    inputs = _batch(torch, [list(words)], [[word_index.get(w.lower(), UNK) for w in words]], char_index,
                    net.clusters)
    training_model.eval()
    with torch.no_grad():
        return torch.softmax(training_model(*inputs), dim=-1)[0].double().numpy()
