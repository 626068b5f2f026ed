"""What is in a treebank: sentences, words, label counts, length histogram."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clparse.read.tree import Tree


@dataclass
class TreebankStats:
    sentences: int = 0
    words: int = 0
    phrase_labels: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    lengths: Counter[int] = field(default_factory=Counter)

    def add(self, tree: Tree) -> None:
        tags = tree.tags()
        self.sentences += 1
        self.words += len(tags)
        self.tags.update(tags)
        self.lengths[len(tags)] += 1
        self.phrase_labels.update(node.label for node in tree.phrases())

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentences": self.sentences,
            "words": self.words,
            "mean_length": self.words / self.sentences if self.sentences else 0.0,
            "phrase_labels": dict(self.phrase_labels.most_common()),
            "tags": dict(self.tags.most_common()),
            "length_histogram": {str(k): v for k, v in sorted(self.lengths.items())},
        }

    def format(self, bucket: int = 5) -> str:
        """A plain-text report; lengths are grouped into buckets of ``bucket`` words."""
        mean = self.words / self.sentences if self.sentences else 0.0
        lines = [f"sentences  {self.sentences:>9,}", f"words      {self.words:>9,}",
                 f"mean len   {mean:>9.1f}", ""]
        lines.append(f"{'phrase label':<14}{'count':>9}")
        lines += [f"{label or '(none)':<14}{count:>9,}" for label, count in self.phrase_labels.most_common()]
        lines += ["", f"{'length':<14}{'sentences':>9}"]
        buckets: Counter[int] = Counter()
        for length, count in self.lengths.items():
            buckets[(length - 1) // bucket if length else -1] += count
        widest = max(buckets.values(), default=1)
        for b in sorted(buckets):
            name = "0" if b < 0 else f"{b * bucket + 1}-{(b + 1) * bucket}"
            bar = "#" * max(1, round(40 * buckets[b] / widest))
            lines.append(f"{name:<14}{buckets[b]:>9,}  {bar}")
        return "\n".join(lines)


def treebank_stats(trees: Iterable[Tree]) -> TreebankStats:
    stats = TreebankStats()
    for tree in trees:
        stats.add(tree)
    return stats
