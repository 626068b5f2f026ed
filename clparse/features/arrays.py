"""Arrays that grow as a sentence or a symbol table does: one amortised doubling rule for all of them."""

from __future__ import annotations

import numpy as np


def grown(array: np.ndarray, size: int, fill: int = 0) -> np.ndarray:
    """``array`` itself if it has ``size`` rows, else a copy with room for ``max(size, 2 × its rows)`` rows
    (doubling: a row is copied a bounded number of times), the new rows set to ``fill``."""
    if len(array) >= size:
        return array
    new = np.full((max(size, 2 * len(array)), *array.shape[1:]), fill, dtype=array.dtype)
    new[:len(array)] = array
    return new
