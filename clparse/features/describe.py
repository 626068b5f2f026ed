"""The features of one candidate in readable form, computed by the compiled kernels.

For people and tests: ``candidate_features(frontier, 1, 3, head=0)`` gives the set of
``template[item].property = value`` strings of building a phrase over ``frontier[1:3]`` with its
first child as head, exactly as ``prepare`` and the parser see it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from clparse.features.items import ItemTable
from clparse.features.kernel import emit_head_dependent, emit_head_free, row_capacity
from clparse.features.space import FeatureConfig, FeatureSpace, feature_text
from clparse.features.state import Item
from clparse.features.symbols import SymbolTable


def candidate_features(frontier: Sequence[Item], first: int, end: int, head: int | None = None,
                       config: FeatureConfig | None = None) -> set[str]:
    """Readable features of a candidate over ``frontier[first:end]`` (head-free only if ``head`` is None).

    ``frontier`` must reach back to the sentence's leaves: leaf ``i`` spans word ``i``.
    """
    leaves = sorted({t for item in frontier for t in item.terminals()}, key=lambda t: t.start)
    items = ItemTable(leaves, SymbolTable(), max(end - first, 1))
    ids = items.frontier(frontier)
    space = FeatureSpace(config or FeatureConfig(), items.symbols)
    codes = np.empty(row_capacity(end - first, items.size), dtype=np.int64)
    count = emit_head_free(codes, ids, first, end, items.arrays(), space.arrays())
    if head is not None:
        count = emit_head_dependent(codes, count, ids, first, end, head, items.arrays(), space.arrays())
    return {feature_text(space.key(int(c))) for c in codes[:count]}
