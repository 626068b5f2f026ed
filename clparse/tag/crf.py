"""Part-of-speech tagging with a linear-chain CRF (CRFsuite through python-crfsuite), stored as bytes.

Why a CRF: in the tagger study of issue 12 on GUM (train 10,224 sentences, dev 28,119 tokens,
all lengths; ``benchmarks/tagging.py`` repeats it) it was the only option to reach 96.0 %: with
feature set 1 96.18 % (1,074 errors) against 95.02 % for NLTK's perceptron as clparse trains it;
unknown words 85.7 % against 81.9 %. Feature set 2 (issue 29, docs/tagger.md) reaches
96.44 % on GUM dev and feature set 3 96.57 %, short of the 97 % asked for: the errors left are
mostly noun/adjective/participle decisions, a third on unknown words, and function words whose GUM
tag needs more than the ±2 window; word clusters of GUM train's text, wider windows and a stacked
second CRF did not move them. Brown clusters of a large corpus did: feature set 4, 96.96 %.

Feature set 1 (:func:`sentence_features`, every one a string with weight 1): a bias; the
lower-cased word; its prefixes and suffixes of 1-4 characters; its collapsed shape (``Mr.`` ->
``Xx.``); flags for a digit, all digits, a hyphen, an initial capital (a flag of its own on the
first token) and all capitals; the lower-cased words at -2, -1, +1 and +2 (padded past the
sentence ends); the word bigrams with its left and right neighbour; ``BOS`` and ``EOS`` on the
first and last token. Label transitions are CRFsuite's first-order ones, all of them allowed (L1
prunes what is useless); CRFsuite has no second-order transitions. Defaults ``c1=0.2, c2=0.001``.

Feature set 2 (:func:`sentence_features_v2`): set 1, plus the word's
ambiguity class (the tags it had in training, a :class:`Lexicon` stored with the model) and its
suffixes of 5 and 6 characters; a word the lexicon does not know loses the attributes that name it.
Training tokens get their class from the other folds of the training data, so the class never
carries a token's own gold tag. Defaults ``c1=0.05, c2=0.05`` (more L2 than set 1), 150 iterations
of L-BFGS (OWL-QN, since ``c1 > 0``). Measured one at a time and dropped: the neighbours' shapes,
the neighbours' classes, the pair of words at -1 and +1.

Feature set 3 (:func:`sentence_features_v3`): set 2, plus the nearest
verb-like word up to 6 to the left, the parity of quotes so far for a quote token, and the class of
the lower-cased word, all from the same lexicon (same defaults, same byte layout). Measured and
dropped (docs/tagger.md): word clusters of the training text, the words at ±3, the neighbours'
suffixes, sentence-wide attributes, the next verb-like word, a stacked second CRF.

Feature set 4 (the default for new models since 2026-11-29): set 3, plus the word's Brown cluster
(:mod:`clparse.tag.clusters`: the first 4, 6, 10 and 20 bits of its path in clusters of a large English
corpus, from spacy-lookups-data), which tells the CRF what kind of word an unknown word is: on GUM dev
96.96 % (855 errors against set 3's 964; unknown words 89.1 % against 85.1 %). The neighbours' clusters
added nothing more (854 errors).

The bytes of :meth:`CrfTagger.to_bytes` are a 52-byte header of our own (a magic string, the
format version, the feature-set version and the SHA-256 of the rest), then, for feature sets 2 to
4, the lexicon (its length, then sorted ASCII JSON), then for set 4 the word clusters (their length,
then :meth:`WordClusters.to_bytes`), then CRFsuite's model file. A model is always tagged
with the feature set it was trained with: the features are part of the model (a model tagged with
other features fails silently), so every feature set stays computable, frozen, and a change to one
is a new set. The hash turns any damage into an error instead of wrong tags. Not a pickle:
loading runs no code.

>>> data = [[("the", "DT"), ("dog", "NN"), ("barks", "VBZ")], [("a", "DT"), ("cat", "NN"), ("sleeps", "VBZ")]]
>>> tagger = CrfTagger.train(data * 10, iterations=20)
>>> tagger.tag(["a", "dog", "sleeps"])
['DT', 'NN', 'VBZ']
>>> CrfTagger.from_bytes(tagger.to_bytes()).to_bytes() == tagger.to_bytes()
True
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import tempfile
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite

from clparse.errors import ConfigurationError
from clparse.tag.checks import checked_sentence, checked_words
from clparse.tag.clusters import WordClusters, package_clusters

MAGIC = b"clparse.tag.crf\x00"
FORMAT_VERSION = 1
# The feature set new models are trained with. Every set in FEATURE_SETS stays computable, frozen, so
# a stored model is tagged with the features it was trained with; a new set gets a new number.
FEATURE_SET = 4
FEATURE_SETS = (1, 2, 3, 4)
_HEADER = struct.Struct("<16sHH32s")  # magic, format version, feature-set version, SHA-256 of the payload
_LEXICON_SIZE = struct.Struct("<I")  # feature sets 2-4: bytes of the lexicon's JSON before CRFsuite's model
_CLUSTERS_SIZE = struct.Struct("<I")  # feature set 4: bytes of the word clusters after the lexicon
# Feature set 2's ambiguity classes of training tokens come from the other folds (see Lexicon).
LEXICON_FOLDS = 10
LEXICON_BLOCK = 200  # sentences dealt to a fold together, so a document mostly stays in one fold

# L1 and L2 weights of feature sets 2 to 4 (tuned on GUM dev for 2 and 3, docs/tagger.md); set 1 has its own.
DEFAULT_C1 = 0.05
DEFAULT_C2 = 0.05
_DEFAULTS = {1: (0.2, 0.001), 2: (0.05, 0.05), 3: (DEFAULT_C1, DEFAULT_C2), 4: (DEFAULT_C1, DEFAULT_C2)}
DEFAULT_ITERATIONS = 150
# A POS tag set has tens of tags; CRFsuite allocates label x label matrices per tagger, so a model
# claiming more labels than this is not ours and could exhaust memory.
MAX_LABELS = 1024


#: Below this marginal probability of its best tag a word is unsure (:meth:`CrfTagger.alternatives`).
UNSURE = 0.9


class _Trainer(pycrfsuite.Trainer):  # type: ignore[misc]
    """CRFsuite's trainer, silent, telling ``on_iteration(n)`` when iteration n ends.

    python-crfsuite parses its log into events only when ``verbose`` is on, and then prints them from
    its ``on_*`` methods: they are replaced by nothing here, but the iteration's.
    """

    def __init__(self, on_iteration: Callable[[int], object] | None) -> None:
        super().__init__(verbose=on_iteration is not None)
        self.iteration_done = on_iteration

    def on_iteration(self, log: str, info: dict[str, Any]) -> None:
        if self.iteration_done is not None:
            self.iteration_done(int(info["num"]))

    def on_start(self, log: str) -> None: ...
    def on_featgen_progress(self, log: str, percent: float) -> None: ...
    def on_featgen_end(self, log: str) -> None: ...
    def on_prepared(self, log: str) -> None: ...
    def on_prepare_error(self, log: str) -> None: ...
    def on_optimization_end(self, log: str) -> None: ...
    def on_end(self, log: str) -> None: ...


def _log_ratio(p_best: float, p_other: float) -> float:
    """log(p_best / p_other), finite: a marginal CRFsuite gives as 0 counts as the smallest positive
    double."""
    tiny = 5e-324
    return math.log(max(p_best, tiny)) - math.log(max(p_other, tiny))


def swapped_taggings(best: list[str], unsure: list[tuple[float, int, str, float]],
                     count: int) -> list[tuple[list[str], float]]:
    """The best tagging, then up to ``count`` more, each with one word's tag swapped: ``unsure`` holds
    (the word's best probability, its position, the tag swapped in, the certainty against it), taken least
    sure first (ties: the earlier word). Shared by every tagger with :meth:`CrfTagger.scored_alternatives`."""
    unsure = sorted(unsure, key=lambda entry: (entry[0], entry[1]))
    taggings = [(best, 0.0)]
    for _, t, other, certainty in unsure[:count]:
        tags = list(best)
        tags[t] = other
        taggings.append((tags, certainty))
    return taggings


def tagging_accuracy(tag: Callable[[list[str]], list[str]],
                     sentences: Sequence[Sequence[tuple[str, str]]]) -> float:
    """Share of the tokens of ``sentences`` that ``tag`` tags as given, pooled over all of them."""
    correct = total = 0
    for sentence in sentences:
        predicted = tag([word for word, _ in sentence])
        correct += sum(p == gold for p, (_, gold) in zip(predicted, sentence))
        total += len(sentence)
    if total == 0:
        raise ValueError("no tagged words to score the tagger on")
    return correct / total


class CrfTagger:
    """Linear-chain CRF POS tagger (CRFsuite), trained locally; bytes in and out."""

    name = "crf"  # which tagger a tag chooser was fitted on (tag_choosers.tagger)

    def __init__(self, data: bytes) -> None:
        """Open a model from :meth:`to_bytes` output; same as :meth:`from_bytes`."""
        data, feature_set, lexicon, clusters, model = _checked(data)
        tagger = pycrfsuite.Tagger()
        try:
            tagger.open_inmemory(model)
        except ValueError as exc:  # only if CRFsuite refuses what passed every check above
            raise ConfigurationError(f"malformed CRF tagger model: CRFsuite cannot open it ({exc})") from exc
        try:  # tags come back decoded: a label that is not UTF-8 would fail in tag(), so fail here
            labels = tagger.labels()
        except UnicodeDecodeError as exc:
            raise ConfigurationError(f"malformed CRF tagger model: a label is not UTF-8 ({exc})") from exc
        _require(all(labels) and len(set(labels)) == len(labels),
                 "its labels are not distinct non-empty tags")
        # CRFsuite keeps a pointer into this buffer without copying it, and pycrfsuite keeps no
        # reference to it: the bytes must live exactly as long as the tagger.
        self._model = model
        self._data = data
        self._tagger = tagger
        # CRFsuite's tagger keeps the sentence it last tagged, which marginals() and alternatives() then
        # read in several calls: held across them, so threads sharing this tagger never read each
        # other's sentence (re-entrant: both call tag()).
        self._lock = threading.RLock()
        self._labels = list(labels)
        self.feature_set = feature_set  # the features it was trained with, hence tags with
        self.lexicon = lexicon
        self.clusters = clusters  # feature set 4's word clusters, its own copy

    @classmethod
    def train(cls, sentences: Sequence[Sequence[tuple[str, str]]], c1: float | None = None,
              c2: float | None = None, iterations: int = DEFAULT_ITERATIONS,
              feature_set: int = FEATURE_SET,
              on_iteration: Callable[[int], object] | None = None,
              clusters: WordClusters | None = None) -> CrfTagger:
        """Train on ``(word, tag)`` sentences; the same sentences and settings give the same bytes.

        Nothing in CRFsuite's L-BFGS is random, and feature ids follow the order sentences and
        features are appended in, which is fixed here (no set or dict iteration). ``feature_set``
        1 is the old feature set, kept so that its models can be rebuilt and compared; ``c1`` and
        ``c2`` default to the feature set's own. ``on_iteration(n)`` after L-BFGS iteration n (from 1; it
        may stop before ``iterations`` once converged): for a progress bar, the model is the same.
        ``clusters``: feature set 4's word clusters (default: the installed spacy-lookups-data's,
        :func:`clparse.tag.clusters.package_clusters`); the model keeps a copy.
        """
        if feature_set not in FEATURE_SETS:
            raise ConfigurationError(f"CRF tagger feature set must be one of {FEATURE_SETS}, "
                                     f"got {feature_set!r}")
        c1 = _DEFAULTS[feature_set][0] if c1 is None else c1
        c2 = _DEFAULTS[feature_set][1] if c2 is None else c2
        for name, value in (("c1", c1), ("c2", c2)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"CRF tagger {name} must be a finite number >= 0, got {value!r}")
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ConfigurationError(f"tagger iterations must be at least 1, got {iterations!r}")
        data = [(n, pairs) for n, sentence in enumerate(sentences)
                if (pairs := checked_sentence(sentence, n))]
        if not data:
            raise ValueError("no tagged words to train the tagger on")
        for n, sentence in data:
            try:
                for _, tag in sentence:
                    tag.encode("utf-8")
            except UnicodeEncodeError as exc:  # only a tag can be left to fail: words go through _utf8
                raise ValueError(f"sentence {n}: a tag cannot be encoded as UTF-8 ({exc})") from exc
        words = [[_utf8(word) for word, _ in sentence] for _, sentence in data]
        lexicon = None
        if clusters is not None and feature_set != 4:
            raise ConfigurationError(f"word clusters are feature set 4's, not feature set {feature_set}'s")
        if feature_set == 4 and clusters is None:
            clusters = package_clusters()
        if feature_set == 1:
            attributes = [sentence_features(w) for w in words]
        else:
            tagged = [list(zip(w, (tag for _, tag in sentence))) for w, (_, sentence) in zip(words, data)]
            lexicon = Lexicon.build(tagged)
            attributes = _training_features(feature_set, tagged)
            if feature_set == 4:
                assert clusters is not None
                for sentence_words, features in zip(words, attributes):
                    _with_clusters(features, clusters, sentence_words)
        trainer = _Trainer(on_iteration)
        for features, (_, sentence) in zip(attributes, data):
            trainer.append(features, [tag for _, tag in sentence])
        trainer.select("lbfgs")
        trainer.set_params({"c1": float(c1), "c2": float(c2), "max_iterations": iterations,
                            "feature.possible_transitions": True})
        with tempfile.TemporaryDirectory(prefix="clparse-crf-") as directory:
            path = Path(directory) / "model.crfsuite"  # CRFsuite can only write a model to a file
            trainer.train(str(path))
            model = path.read_bytes()
        payload = model if lexicon is None else _with_lexicon(
            lexicon, model if feature_set < 4 else _with_clusters_table(clusters, model))
        header = _HEADER.pack(MAGIC, FORMAT_VERSION, feature_set, hashlib.sha256(payload).digest())
        return cls(header + payload)

    @classmethod
    def from_bytes(cls, data: bytes) -> CrfTagger:
        """Rebuild a tagger from :meth:`to_bytes` output, checked before CRFsuite reads a byte of it.

        CRFsuite follows the offsets in a model without bounds checks, so a damaged or foreign
        model could crash the process: everything it will read is validated here first, and any
        problem is a :class:`ConfigurationError` of one line.
        """
        return cls(data)

    def to_bytes(self) -> bytes:
        return self._data

    def features(self, words: Sequence[str]) -> list[list[str]]:
        """The CRFsuite attributes of each word, from the feature set the model was trained with."""
        if self.lexicon is None:
            return sentence_features(words)
        if self.feature_set == 2:
            return sentence_features_v2(words, self.lexicon.classes_of(words))
        lexicon = self.lexicon
        features = sentence_features_v3(words, lexicon.classes_of(words), lexicon.lower_classes_of(words))
        if self.clusters is not None:  # feature set 4
            _with_clusters(features, self.clusters, words)
        return features

    def tag(self, words: Sequence[str]) -> list[str]:
        """One tag per word. Words are the original tokens: case is a feature, so do not lower them."""
        words = checked_words(words)
        if not words:
            return []
        with self._lock:
            try:
                return list(self._tagger.tag(self.features(words)))
            except (SystemError, UnicodeEncodeError):  # pycrfsuite's way of failing on a lone surrogate
                return list(self._tagger.tag(self.features([_utf8(word) for word in words])))

    def marginals(self, words: Sequence[str]) -> list[dict[str, float]]:
        """Each word's marginal probability of every tag (they sum to 1 per word), given the whole
        sentence: how sure the tagger is, word by word (``benchmarks/tag_alternatives.py``)."""
        words = checked_words(words)
        if not words:
            return []
        with self._lock:
            self.tag(words)  # sets this sentence's attributes on the CRFsuite tagger, which marginals read
            return [{label: self._tagger.marginal(label, t) for label in self._labels}
                    for t in range(len(words))]

    def alternatives(self, words: Sequence[str], count: int, threshold: float = UNSURE) -> list[list[str]]:
        """The best tagging, then up to ``count`` more: each the best with one word's tag replaced by its
        second most probable tag, for the words whose best tag has a marginal probability below
        ``threshold``, least sure first (ties: the earlier word). For parsing several taggings and
        keeping the best parse (``SearchOptions.tag_alternatives``)."""
        return [tags for tags, _ in self.scored_alternatives(words, count, threshold)]

    def scored_alternatives(self, words: Sequence[str], count: int,
                            threshold: float = UNSURE) -> list[tuple[list[str], float]]:
        """:meth:`alternatives`, each with the tagger's certainty against it: log(p_best / p_other), the
        marginal probabilities of the best tagging's tag and of the swapped-in one at the swapped word
        (0 for the best tagging itself). The tag chooser (:mod:`clparse.tag.choice`) weighs it."""
        words = checked_words(words)
        with self._lock:
            best = self.tag(words)
            if count < 1 or not words:
                return [(best, 0.0)]
            # tag() has just set this sentence's attributes on the CRFsuite tagger: marginals read them
            unsure: list[tuple[float, int, str, float]] = []
            for t in range(len(words)):
                ranked = sorted(((self._tagger.marginal(label, t), label) for label in self._labels),
                                key=lambda pair: -pair[0])  # stable: equal marginals keep label order
                if ranked[0][0] < threshold and len(ranked) > 1:
                    other, p_other = ranked[1][::-1] if ranked[0][1] == best[t] else ranked[0][::-1]
                    p_best = self._tagger.marginal(best[t], t)
                    unsure.append((ranked[0][0], t, other, _log_ratio(p_best, p_other)))
        return swapped_taggings(best, unsure, count)

    def tag_many(self, sentences: Iterable[Sequence[str]]) -> list[list[str]]:
        return [self.tag(words) for words in sentences]

    def accuracy(self, sentences: Sequence[Sequence[tuple[str, str]]]) -> float:
        """Share of tokens tagged as in ``sentences``, pooled over all of them (not per sentence)."""
        return tagging_accuracy(self.tag, sentences)

    def labels(self) -> list[str]:
        """The tags the model can output, in CRFsuite's order."""
        return list(self._labels)

    def __reduce__(self) -> tuple[type[CrfTagger], tuple[bytes]]:
        # CRFsuite's tagger cannot be pickled; rebuilding from the checked bytes lets a tagger
        # reach worker processes.
        return (CrfTagger, (self._data,))


class Lexicon:
    """What feature set 2 knows of the training words: each word's ambiguity class.

    A word's ambiguity class is the set of tags it had in training (``NN|VB``). Computed from all
    of training it would always hold the gold tag of a training token, and the CRF would learn to
    trust it more than it deserves on new text; so each training token gets the class from the
    other folds (:meth:`held_out_classes`), and a word the other folds never saw gets ``<unk>``,
    exactly as an unknown word does when tagging. The stored lexicon, used when tagging, has the
    classes from all of training.
    """

    def __init__(self, classes: dict[str, str]) -> None:
        self.classes = classes
        self._lower: dict[str, str] | None = None  # feature set 3's lower-cased classes, made on demand

    @classmethod
    def build(cls, sentences: Sequence[Sequence[tuple[str, str]]]) -> Lexicon:
        return cls({word: _ambiguity_class(tags) for word, tags in _tag_counts(sentences).items()})

    @staticmethod
    def held_out_classes(sentences: Sequence[Sequence[tuple[str, str]]]) -> list[list[str | None]]:
        """Per training token, its word's class in the folds other than its own (None: unseen there).

        Blocks of LEXICON_BLOCK consecutive sentences are dealt to LEXICON_FOLDS folds in turn: a
        document's sentences mostly share a fold, as a new document's words are not in training.
        """
        fold = [(i // LEXICON_BLOCK) % LEXICON_FOLDS for i in range(len(sentences))]
        total = _tag_counts(sentences)
        per_fold = [_tag_counts([s for s, f in zip(sentences, fold) if f == k]) for k in range(LEXICON_FOLDS)]
        out: list[list[str | None]] = []
        for sentence, k in zip(sentences, fold):
            row: list[str | None] = []
            for word, _ in sentence:
                others = total[word] - per_fold[k][word]  # Counter subtraction drops tags left at 0
                row.append(_ambiguity_class(others) if others else None)
            out.append(row)
        return out

    def classes_of(self, words: Sequence[str]) -> list[str | None]:
        return [self.classes.get(word) for word in words]

    def lower_classes_of(self, words: Sequence[str]) -> list[str | None]:
        """Each word's class as a lower-cased form (feature set 3): the tags of all its spellings in
        case, so ``The`` at the start of a sentence still finds ``the``'s tags. The same as a lexicon
        built from lower-cased training words, without storing a second one."""
        if self._lower is None:
            tags: defaultdict[str, set[str]] = defaultdict(set)
            for word, found in self.classes.items():
                tags[word.lower()].update(found.split("|"))
            self._lower = {word: "|".join(sorted(found)) for word, found in tags.items()}
        return [self._lower.get(word.lower()) for word in words]

    def to_bytes(self) -> bytes:
        """Sorted JSON (ASCII, so a word with a lone surrogate survives): the same lexicon, the same bytes."""
        text = json.dumps(sorted(self.classes.items()), ensure_ascii=True, separators=(",", ":"))
        return text.encode("ascii")

    @classmethod
    def from_bytes(cls, data: bytes) -> Lexicon:
        try:
            pairs = json.loads(data.decode("ascii"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." forged
            raise ConfigurationError(f"malformed CRF tagger model: its lexicon is not JSON ({exc})") from exc
        _require(isinstance(pairs, list) and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) and x for x in pair)
            for pair in pairs), "its lexicon is not a list of [word, class] pairs")
        return cls(dict(pairs))


def _tag_counts(sentences: Iterable[Sequence[tuple[str, str]]]) -> defaultdict[str, Counter[str]]:
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for sentence in sentences:
        for word, tag in sentence:
            counts[word][tag] += 1
    return counts


def _ambiguity_class(tags: Counter[str]) -> str:
    return "|".join(sorted(tags))


def _with_lexicon(lexicon: Lexicon, model: bytes) -> bytes:
    text = lexicon.to_bytes()
    return _LEXICON_SIZE.pack(len(text)) + text + model


def _utf8(word: str) -> str:
    """``word`` as CRFsuite can take it (UTF-8): a lone surrogate, as input decoded with
    ``surrogateescape`` holds, becomes its backslash escape, in training and tagging alike."""
    return word.encode("utf-8", "backslashreplace").decode("utf-8")


def shape(word: str) -> str:
    """Collapsed word shape: upper -> X, lower -> x, digit -> d, others kept; runs collapsed.

    >>> [shape(w) for w in ["Mr.", "L2", "1990s", "e-mail", "USA"]]
    ['Xx.', 'Xd', 'dx', 'x-x', 'X']
    """
    out: list[str] = []
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def sentence_features(words: Sequence[str]) -> list[list[str]]:
    """CRFsuite attributes of each token: feature set 1 (see the module docstring), frozen."""
    low = [w.lower() for w in words]
    last = len(words) - 1
    pad = ["<s2>", "<s1>", *low, "</s1>", "</s2>"]  # pad[i + 2] is token i
    out = []
    for i, word in enumerate(words):
        lw = low[i]
        features = ["bias", "w=" + lw]
        for k in range(1, min(len(lw), 4) + 1):
            features.append(f"p{k}=" + lw[:k])
            features.append(f"s{k}=" + lw[-k:])
        features.append("shape=" + shape(word))
        if any(ch.isdigit() for ch in word):
            features.append("has_digit")
        if word.isdigit():
            features.append("all_digit")
        if "-" in word:
            features.append("has_hyphen")
        if word[:1].isupper():
            features.append("init_cap" if i else "init_cap_first")
        if word.isupper():
            features.append("all_caps")
        features += ["w-2=" + pad[i], "w-1=" + pad[i + 1], "w+1=" + pad[i + 3], "w+2=" + pad[i + 4],
                     "w-1|w=" + pad[i + 1] + "|" + lw, "w|w+1=" + lw + "|" + pad[i + 3]]
        if i == 0:
            features.append("BOS")
        if i == last:
            features.append("EOS")
        out.append(features)
    return out


def sentence_features_v2(words: Sequence[str], classes: Sequence[str | None]) -> list[list[str]]:
    """Feature set 2: set 1 plus the word's ambiguity class and its suffixes of 5 and 6 characters (of a
    longer word); an unknown word has no word identity.

    ``classes`` holds each word's ambiguity class (:class:`Lexicon`), None for a word it does not
    know. Such a word gets ``amb=<unk>`` and loses the attributes naming it (``w=``, ``w-1|w=``,
    ``w|w+1=``): on new text they would carry no weight, and a training token unknown to the other
    folds without them teaches the CRF to tag from spelling and context, as it must on new text.
    Frozen like set 1: a change is a new feature set.
    """
    out = sentence_features(words)
    for word, features, amb in zip(words, out, classes):
        if amb is None:
            features[:] = [f for f in features if not f.startswith(_WORD_IDENTITY)]
        low = word.lower()
        features += [f"s{k}=" + low[-k:] for k in (5, 6) if len(low) > k]
        features.append("amb=" + (amb or "<unk>"))
    return out


_WORD_IDENTITY = ("w=", "w-1|w=", "w|w+1=")


def _training_features(feature_set: int,
                       tagged: Sequence[Sequence[tuple[str, str]]]) -> list[list[list[str]]]:
    """Feature set 2's or 3's attributes of training sentences, every class from the other folds (set 4's
    before its word clusters, which :func:`_with_clusters` adds)."""
    classes = Lexicon.held_out_classes(tagged)
    words = [[word for word, _ in sentence] for sentence in tagged]
    if feature_set == 2:
        return [sentence_features_v2(w, c) for w, c in zip(words, classes)]
    lowered = Lexicon.held_out_classes([[(word.lower(), tag) for word, tag in sentence]
                                        for sentence in tagged])
    return [sentence_features_v3(w, c, low) for w, c, low in zip(words, classes, lowered)]


# Feature set 3: how far back to look for the previous verb-like word, and the tokens that are quotes.
PREVIOUS_VERB_WINDOW = 6
_QUOTES = frozenset(('"', "'", "''", "``"))


def sentence_features_v3(words: Sequence[str], classes: Sequence[str | None],
                         lower_classes: Sequence[str | None]) -> list[list[str]]:
    """Feature set 3: set 2 plus three attributes measured on GUM dev (docs/tagger.md).

    ``pv=``: the lower-cased nearest word at most PREVIOUS_VERB_WINDOW to the left whose class holds a
    verb or modal tag (``<none>``): ``had``/``was`` some words back decide VBN against VBD, ``to``/``will``
    VB against VBP, which the ±2 window misses. ``q"#odd``: a quote token after an odd number of quotes
    in the sentence closes one (`` against ''). ``lamb=``: the class of the lower-cased word
    (``lower_classes``, :meth:`Lexicon.lower_classes_of`; training tokens: from the other folds), which a
    capitalised first word or a title word has when its spelling in case is unknown. Frozen like set 2.
    """
    out = sentence_features_v2(words, classes)
    verbs = [_verb_like(c) for c in classes]
    quotes = 0
    for i, (word, features) in enumerate(zip(words, out)):
        features.append("pv=" + _previous_verb(words, verbs, i))
        if word in _QUOTES:
            features.append(f"q{word}#{'odd' if quotes % 2 else 'even'}")
            quotes += 1
        features.append("lamb=" + (lower_classes[i] or "<unk>"))
    return out


def _with_clusters(features: list[list[str]], clusters: WordClusters, words: Sequence[str]) -> None:
    """Feature set 4: set 3 and each word's Brown-cluster prefixes (:meth:`WordClusters.features`), in place.
    The same for a training token as on new text: the clusters come from other text than GUM's."""
    for own, extra in zip(features, clusters.features(words)):
        own += extra


def _with_clusters_table(clusters: WordClusters | None, model: bytes) -> bytes:
    assert clusters is not None
    table = clusters.to_bytes()
    return _CLUSTERS_SIZE.pack(len(table)) + table + model


def _verb_like(ambiguity_class: str | None) -> bool:
    return ambiguity_class is not None and any(
        tag == "MD" or tag.startswith("VB") for tag in ambiguity_class.split("|"))


def _previous_verb(words: Sequence[str], verbs: Sequence[bool], i: int) -> str:
    for k in range(i - 1, max(-1, i - 1 - PREVIOUS_VERB_WINDOW), -1):
        if verbs[k]:
            return words[k].lower()
    return "<none>"


# --- Validation of the bytes, after CRFsuite's sources as python-crfsuite 0.9.12 vendors them
# (chokkan/crfsuite dc5b6c7: lib/crf/src/crf1d_model.c, crf1d_tag.c, lib/cqdb/src/cqdb.c).
# Integers are little-endian uint32.

# 48 bytes: "lCRF", file size, "FOMC", version 100, 3 counts, 5 offsets
_CRF_HEADER = struct.Struct("<4sI4s9I")
_CHUNK = struct.Struct("<4sII")  # chunk id, chunk size, number of items
# "CQDB", chunk size, flag, byte-order mark, backward size, backward offset
_CQDB_HEADER = struct.Struct("<4s5I")
_CQDB_TABLES = 256  # hash tables, each an (offset, bucket count) pair after the CQDB header
_CQDB_DATA = _CQDB_HEADER.size + 8 * _CQDB_TABLES
_CQDB_BYTE_ORDER = 0x62445371
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])  # 20 bytes, packed


def _checked(data: object) -> tuple[bytes, int, Lexicon | None, WordClusters | None, bytes]:
    """``data`` as bytes, its feature set, its lexicon (feature sets 2-4), its word clusters (set 4) and the
    CRFsuite model inside it, after checking our header, the hash and the layout."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ConfigurationError(f"malformed CRF tagger model: expected bytes, got {type(data).__name__}")
    data = bytes(data)  # a bytearray could change under CRFsuite's feet
    if data[:4] == b"lCRF":
        _fail("this is a bare CRFsuite model without clparse's header, so its feature set is unknown")
    _require(data.startswith(MAGIC) or MAGIC.startswith(data),
             f"it does not start with {MAGIC!r} (got {data[:16]!r})")
    _require(len(data) > _HEADER.size,
             f"it is truncated: {len(data)} bytes, not even the {_HEADER.size}-byte header")
    _, version, feature_set, digest = _HEADER.unpack_from(data)
    _require(version == FORMAT_VERSION,
             f"format version {version} is not supported (expected {FORMAT_VERSION})")
    _require(feature_set in FEATURE_SETS,
             f"it was trained with feature set {feature_set}, this clparse computes feature sets "
             f"{', '.join(map(str, FEATURE_SETS))}")
    payload = data[_HEADER.size:]
    _require(hashlib.sha256(payload).digest() == digest,
             "SHA-256 mismatch: the bytes are truncated or damaged")
    lexicon = None
    model = payload
    if feature_set >= 2:  # the lexicon, then CRFsuite's model
        _require(len(payload) >= _LEXICON_SIZE.size, "it is too short for a lexicon")
        (size,) = _LEXICON_SIZE.unpack_from(payload)
        _require(_LEXICON_SIZE.size + size <= len(payload), "its lexicon runs past the end")
        lexicon = Lexicon.from_bytes(payload[_LEXICON_SIZE.size:_LEXICON_SIZE.size + size])
        model = payload[_LEXICON_SIZE.size + size:]
    clusters = None
    if feature_set >= 4:  # the word clusters, then CRFsuite's model
        _require(len(model) >= _CLUSTERS_SIZE.size, "it is too short for its word clusters")
        (size,) = _CLUSTERS_SIZE.unpack_from(model)
        _require(_CLUSTERS_SIZE.size + size <= len(model), "its word clusters run past the end")
        try:
            clusters = WordClusters.from_bytes(model[_CLUSTERS_SIZE.size:_CLUSTERS_SIZE.size + size])
        except ConfigurationError as exc:
            _fail("its " + str(exc).removeprefix("malformed "))  # its word-cluster table: what is wrong
        model = model[_CLUSTERS_SIZE.size + size:]
    _check_crfsuite_layout(model)
    return data, feature_set, lexicon, clusters, model


def _check_crfsuite_layout(model: bytes) -> None:
    """Check every offset, count and id CRFsuite follows when it opens the model and tags.

    The hash already catches accidental damage; this guards against bytes that carry a valid
    hash but were not written by CRFsuite (or by another version of it).
    """
    size = len(model)
    _require(size > _CRF_HEADER.size, f"the CRFsuite model has {size} bytes, no more than its header")
    # The header's feature count is never filled in by CRFsuite (always 0): the FEAT chunk has the count.
    (magic, stated_size, kind, version, _, n_labels, n_attrs,
     off_features, off_labels, off_attrs, off_labelrefs, off_attrrefs) = _CRF_HEADER.unpack_from(model)
    _require(magic == b"lCRF" and kind == b"FOMC",
             f"CRFsuite magic {magic!r}/{kind!r}, expected b'lCRF'/b'FOMC'")
    _require(version == 100, f"CRFsuite model version {version}, expected 100")
    _require(stated_size == size, f"the CRFsuite header says {stated_size} bytes but there are {size}")
    _require(1 <= n_labels <= MAX_LABELS, f"{n_labels} labels (1 to {MAX_LABELS} allowed)")
    raw = np.frombuffer(model, dtype=np.uint8)

    start, n_features = _chunk(model, off_features, b"FEAT", _FEATURE.itemsize)
    features = np.frombuffer(model, dtype=_FEATURE, count=n_features, offset=start)
    state = features["type"] == 0
    _require(bool(np.all(state | (features["type"] == 1))),
             "a feature type other than state (0) or transition (1)")
    _require(bool(np.all(features["dst"] < n_labels)), "a feature outputs a label id out of range")
    _require(bool(np.all(features["src"] < np.where(state, n_attrs, n_labels))),
             "a feature source id is out of range")
    _require(bool(np.all(np.isfinite(features["weight"]))), "a feature weight is not finite")

    _check_refs(model, raw, off_labelrefs, b"LFRF", n_labels, n_features)
    _check_refs(model, raw, off_attrrefs, b"AFRF", n_attrs, n_features)
    _check_cqdb(model, raw, off_labels, "label", n_labels)
    _check_cqdb(model, raw, off_attrs, "attribute", n_attrs)


def _chunk(model: bytes, offset: int, chunk_id: bytes, item_size: int, count: int = 0) -> tuple[int, int]:
    """Check a chunk header, that it has at least ``count`` items and that they fit: (first item's offset,
    items)."""
    name = chunk_id.decode()
    _require(offset + _CHUNK.size <= len(model), f"the {name} chunk (offset {offset}) runs past the end")
    found, _, number = _CHUNK.unpack_from(model, offset)
    _require(found == chunk_id, f"expected chunk {name} at offset {offset}, found {found!r}")
    _require(number >= count, f"chunk {name} has {number} items, expected at least {count}")
    _require(offset + _CHUNK.size + number * item_size <= len(model),
             f"the {number} items of {name} run past the end")
    return offset + _CHUNK.size, number


def _u32(raw: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Little-endian uint32 at arbitrary (unaligned) byte positions, as int64."""
    p = positions.astype(np.int64)
    return (raw[p].astype(np.int64) | raw[p + 1].astype(np.int64) << 8
            | raw[p + 2].astype(np.int64) << 16 | raw[p + 3].astype(np.int64) << 24)


def _check_refs(model: bytes, raw: np.ndarray, offset: int, chunk_id: bytes, count: int,
                n_features: int) -> None:
    """A feature-reference chunk: ``count`` offsets, each to a (length, feature ids...) list.

    CRFsuite writes two unused entries past the labels' (zero offsets); only the first ``count``
    are ever read, so only they are checked.
    """
    name = chunk_id.decode()
    start, _ = _chunk(model, offset, chunk_id, 4, count)
    lists = _u32(raw, start + 4 * np.arange(count, dtype=np.int64))
    _require(bool(np.all(lists + 4 <= len(model))), f"a {name} reference points past the end")
    lengths = _u32(raw, lists)
    ends = lists + 4 + 4 * lengths
    _require(bool(np.all(ends <= len(model))), f"a {name} reference list runs past the end")
    total = int(lengths.sum())
    _require(total <= len(model) // 4,
             f"the {name} reference lists hold more ids than the model has room for")
    # positions of every id of every list, without a Python loop over the lists
    first = (np.repeat(lists + 4 - 4 * (np.cumsum(lengths) - lengths), lengths)
             + 4 * np.arange(total, dtype=np.int64))
    _require(bool(np.all(_u32(raw, first) < n_features)),
             f"a {name} reference names a feature id out of range")


def _check_cqdb(model: bytes, raw: np.ndarray, base: int, name: str, count: int) -> None:
    """A string -> id database (CQDB): hash tables, records and the id -> string array, all in bounds.

    CRFsuite looks attributes up by probing a hash table until it meets an empty bucket, so every
    table needs one; it turns label ids back into strings through the backward array, so every
    label id needs a record there.
    """
    what = f"the {name} dictionary"
    _require(base + _CQDB_DATA <= len(model), f"{what} (offset {base}) runs past the end")
    chunk_id, chunk_size, _, byte_order, bwd_size, bwd_offset = _CQDB_HEADER.unpack_from(model, base)
    _require(chunk_id == b"CQDB" and byte_order == _CQDB_BYTE_ORDER, f"{what} has no CQDB header")
    _require(_CQDB_DATA <= chunk_size <= len(model) - base, f"{what} has a bad size {chunk_size}")
    tables = _u32(raw, base + _CQDB_HEADER.size
                  + 4 * np.arange(2 * _CQDB_TABLES, dtype=np.int64)).reshape(-1, 2)
    records = []
    n_records = 0
    for table_offset, buckets in tables.tolist():
        n_records += buckets // 2  # CRFsuite's own count, which sizes its backward array
        if table_offset == 0:
            continue
        _require(table_offset + 8 * buckets <= chunk_size, f"a hash table of {what} runs past its end")
        offsets = _u32(raw, base + table_offset + 4 + 8 * np.arange(buckets, dtype=np.int64))
        _require(buckets == 0 or bool(np.any(offsets == 0)), f"a hash table of {what} has no empty bucket")
        records.append(offsets[offsets != 0])
    keys = np.concatenate(records) if records else np.zeros(0, dtype=np.int64)
    _check_records(raw, base, chunk_size, keys, what)
    _require(bool(np.all(_u32(raw, base + keys) < count)), f"{what} maps a string to an id out of range")
    if bwd_offset == 0:
        _require(name != "label", f"{what} cannot turn ids back into strings")
        return
    _require(bwd_size <= n_records and bwd_offset + 4 * n_records <= chunk_size,
             f"the backward array of {what} does not fit")
    backward = _u32(raw, base + bwd_offset + 4 * np.arange(n_records, dtype=np.int64))
    if name == "label":
        _require(bwd_size >= count and bool(np.all(backward[:count] != 0)),
                 f"{what} lacks the name of a label")
    _check_records(raw, base, chunk_size, backward[:bwd_size][backward[:bwd_size] != 0], what)


def _check_records(raw: np.ndarray, base: int, chunk_size: int, offsets: np.ndarray, what: str) -> None:
    """Records (id, key size, key with its NUL) at chunk-relative ``offsets`` lie inside the chunk."""
    _require(bool(np.all(offsets + 8 <= chunk_size)), f"a record of {what} lies past its end")
    sizes = _u32(raw, base + offsets + 4)
    _require(bool(np.all((sizes >= 1) & (offsets + 8 + sizes <= chunk_size))),
             f"a key of {what} runs past its end")
    _require(bool(np.all(raw[base + offsets + 8 + sizes - 1] == 0)), f"a key of {what} is not NUL-terminated")


def _require(condition: object, problem: str) -> None:
    if not condition:
        _fail(problem)


def _fail(problem: str) -> None:
    raise ConfigurationError(f"malformed CRF tagger model: {problem}")
