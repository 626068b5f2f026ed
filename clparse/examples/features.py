"""Binary features of a candidate inference (paper §2.1.4, Tables 1-2), from declarative templates.

Every feature asks "does item X have property P = v?". A feature is the
tuple ``(template, item, property, value)``, e.g. ``("context", "left-1",
"headtag", "NN")``. Templates:

* ``child``: the candidate's children by position (first, last, head,
  head-1, head+1);
* ``context``: frontier items left and right of the children (left-1 is the
  nearest), ``FeatureConfig.context`` on each side;
* ``grandchild``: first/last child of the first, last and head child;
* ``exists``: some item of a Table 2 group has the property;
* ``exists-terminal``: some terminal under a group's items has the property.

Absent positions (no head-1, sentence edge, a leaf's children) have the value
``<none>``. Only the head-dependent features change with the label (the head
child comes from the label's head rule), so extraction is split in two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from clparse.errors import ConfigurationError
from clparse.examples.state import Item

NONE = "<none>"
PROPERTIES = ("label", "headtag", "headword")
TERMINAL_PROPERTIES = ("headtag", "headword")  # a terminal's label is its tag
GROUPS = ("all", "non-head", "non-leftmost", "non-rightmost", "left-of-head", "right-of-head",
          "head-and-left", "head-and-right")
HEAD_FREE_GROUPS = ("all", "non-leftmost", "non-rightmost")


@dataclass(frozen=True)
class FeatureConfig:
    """Which templates are on; stored with every run."""

    context: int = 2
    child: bool = True
    grandchild: bool = True
    exists: bool = True
    exists_terminal: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.context <= 5:
            raise ConfigurationError(f"context must be between 0 and 5 items, got {self.context}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FeatureConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigurationError(f"unknown feature settings: {', '.join(sorted(unknown))}")
        return cls(**values)


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
            self._item_features(out, "context", f"right-{k}", frontier[end - 1 + k] if end - 1 + k < len(frontier)
                                else None)
        if self.config.grandchild:
            for name, child in (("first", children[0]), ("last", children[-1])):
                self._grandchildren(out, name, child)
        for group, members in (("all", children), ("non-leftmost", children[1:]), ("non-rightmost", children[:-1])):
            self._group_features(out, group, members)
        return out

    def head_dependent(self, frontier: Sequence[Item], first: int, end: int, head: int) -> set[int]:
        """Features that depend on which child is the head."""
        out: set[int] = set()
        children = frontier[first:end]
        if self.config.child:
            self._item_features(out, "child", "head", children[head])
            self._item_features(out, "child", "head-1", children[head - 1] if head > 0 else None)
            self._item_features(out, "child", "head+1", children[head + 1] if head + 1 < len(children) else None)
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
