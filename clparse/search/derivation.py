"""A parse's derivation: the inferences a search took (``SearchResult.path``), replayed into constituents.

Each inference built one constituent, and its confidence is what that label's classifier said of it on
the frontier of that moment (paper §2.2): the numbers the aggregate score was made of. A tree holds each
(label, start, end) at most once (a unary chain never repeats a label), so a constituent is named by it.
"""

from __future__ import annotations

from collections.abc import Sequence

from clparse.features.state import Item, interner, replaced

Step = tuple[int, int, str, float]  # first frontier position, end position, label, confidence


def constituents(leaves: Sequence[Item], path: Sequence[Step]) -> list[tuple[Item, float]]:
    """Every constituent the path built, in the order built, with its classifier's confidence."""
    make = interner()
    frontier = tuple(leaves)
    built: list[tuple[Item, float]] = []
    for first, end, label, confidence in path:
        if not 0 <= first < end <= len(frontier):
            raise ValueError(f"inference {first}:{end} {label} is off a frontier of {len(frontier)} items")
        item = make(label, frontier[first:end])
        built.append((item, confidence))
        frontier = replaced(frontier, first, end, item)
    return built


def confidences(leaves: Sequence[Item], path: Sequence[Step]) -> dict[tuple[str, int, int], float]:
    """(label, start, end) -> confidence, spans in leaf positions, for every constituent of the path."""
    return {(item.label, item.start, item.end): confidence for item, confidence in constituents(leaves, path)}
