"""Boosted confidence-rated decision trees per label (paper §2.1.2-2.1.3), independent of storage."""

from clparse.boost.booster import Booster, BoostSettings, IterationResult
from clparse.boost.tree import GrownTree, Node, grow_tree

__all__ = ["BoostSettings", "Booster", "GrownTree", "IterationResult", "Node", "grow_tree"]
