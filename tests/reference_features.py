"""Reference feature extraction in plain Python: the test oracle for the compiled kernels.

This was clparse's extractor before the features were compiled (clparse.features.kernel); it
stays here, unchanged, as an independent statement of Tables 1-2: the parity tests check that the
kernels give exactly its feature sets and its first-seen id order.

The templates are described in clparse.features.space and docs/examples.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from clparse.features.space import NONE, PROPERTIES, FeatureConfig
from clparse.features.state import Item

FeatureKey = tuple[str, str, str, str]


class FeatureDictionary:
    """Feature tuple <-> dense integer id, in first-seen order (deterministic for a fixed input order)."""

    def __init__(self) -> None:
        self.ids: dict[FeatureKey, int] = {}
        self.keys: list[FeatureKey] = []

    def id(self, key: FeatureKey) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return found

    def __len__(self) -> int:
        return len(self.keys)

    @staticmethod
    def text(key: FeatureKey) -> str:
        """Readable form: ``context[left-1].headtag = NN``."""
        template, item, prop, value = key
        return f"{template}[{item}].{prop} = {value}"


def _values(item: Item | None) -> tuple[str, str, str]:
    return (NONE, NONE, NONE) if item is None else (item.label, item.headtag, item.headword)


class FeatureExtractor:
    """Turns (frontier, children span, head index) into sorted feature ids."""

    def __init__(self, config: FeatureConfig, dictionary: FeatureDictionary) -> None:
        self.config = config
        self.dictionary = dictionary

    def _item_features(self, out: set[int], template: str, slot: str, item: Item | None) -> None:
        for prop, value in zip(PROPERTIES, _values(item)):
            out.add(self.dictionary.id((template, slot, prop, value)))

    def _group_features(self, out: set[int], group: str, items: Sequence[Item]) -> None:
        lookup = self.dictionary.id
        if self.config.exists:
            for item in items:
                for prop, value in zip(PROPERTIES, _values(item)):
                    out.add(lookup(("exists", group, prop, value)))
        if self.config.exists_terminal:
            for item in items:
                for terminal in item.terminals():
                    out.add(lookup(("exists-terminal", group, "headtag", terminal.headtag)))
                    out.add(lookup(("exists-terminal", group, "headword", terminal.headword)))

    def head_free(self, frontier: Sequence[Item], first: int, end: int) -> set[int]:
        """Features that do not depend on the head child (shared by every label)."""
        out: set[int] = set()
        children = frontier[first:end]
        if self.config.child:
            self._item_features(out, "child", "first", children[0])
            self._item_features(out, "child", "last", children[-1])
        for k in range(1, self.config.context + 1):
            self._item_features(out, "context", f"left-{k}", frontier[first - k] if first - k >= 0 else None)
            self._item_features(out, "context", f"right-{k}",
                                frontier[end - 1 + k] if end - 1 + k < len(frontier)
                                else None)
        if self.config.grandchild:
            for name, child in (("first", children[0]), ("last", children[-1])):
                self._grandchildren(out, name, child)
        for group, members in (("all", children), ("non-leftmost", children[1:]),
                               ("non-rightmost", children[:-1])):
            self._group_features(out, group, members)
        return out

    def head_dependent(self, frontier: Sequence[Item], first: int, end: int, head: int) -> set[int]:
        """Features that depend on which child is the head."""
        out: set[int] = set()
        children = frontier[first:end]
        if self.config.child:
            self._item_features(out, "child", "head", children[head])
            self._item_features(out, "child", "head-1", children[head - 1] if head > 0 else None)
            self._item_features(out, "child", "head+1",
                                children[head + 1] if head + 1 < len(children) else None)
        if self.config.grandchild:
            self._grandchildren(out, "head", children[head])
        groups = (("non-head", children[:head] + children[head + 1:]), ("left-of-head", children[:head]),
                  ("right-of-head", children[head + 1:]), ("head-and-left", children[:head + 1]),
                  ("head-and-right", children[head:]))
        for group, members in groups:
            self._group_features(out, group, members)
        return out

    def _grandchildren(self, out: set[int], name: str, child: Item) -> None:
        kids = child.children
        self._item_features(out, "grandchild", f"{name}.first", kids[0] if kids else None)
        self._item_features(out, "grandchild", f"{name}.last", kids[-1] if kids else None)
