"""Step 1 of the pipeline: reading treebank files into :class:`Tree` objects."""

from clparse.read.ptb import (
    ReadReport,
    format_tree,
    format_tree_indented,
    parse_tree,
    read_treebank,
    read_trees,
    unwrap,
    write_trees,
)
from clparse.read.tree import Tree

__all__ = [
    "ReadReport", "Tree", "format_tree", "format_tree_indented", "parse_tree",
    "read_treebank", "read_trees", "unwrap", "write_trees",
]
