"""The one codec for typed arrays in blobs: a blob column's name ends in its element type.

``indptr_int64`` holds little-endian int64, ``y_int8`` int8, ``margins_float64`` float64, and so
on: the schema declares each blob's type once, in its name, and everything stored or read goes
through :func:`encode` / :func:`decode`, so a dtype is spelled in one place. Little-endian on every
machine, so a database file moves between machines as it is (SQL's ``clparse_*`` functions and
``docs/schema.md`` read it the same way).

>>> decode("y_int8", encode("y_int8", [1, -1]))
array([ 1, -1], dtype=int8)
"""

from __future__ import annotations

from typing import Any

import numpy as np

DTYPES: dict[str, np.dtype[Any]] = {"int8": np.dtype("i1"), "int32": np.dtype("<i4"),
                                    "int64": np.dtype("<i8"), "float64": np.dtype("<f8")}


def dtype_of(column: str) -> np.dtype[Any]:
    """The element type a blob column's name declares (its suffix after the last underscore)."""
    suffix = column.rsplit("_", 1)[-1]
    if suffix not in DTYPES:
        raise ValueError(f"blob column {column!r} does not end in an element type ({', '.join(DTYPES)})")
    return DTYPES[suffix]


def encode(column: str, values: Any) -> bytes:
    """The bytes stored in ``column`` for ``values`` (any array-like; converted, never truncated silently)."""
    dtype = dtype_of(column)
    array = np.asarray(values)
    if array.size and array.dtype.kind in "iu" and dtype.kind == "i":
        info = np.iinfo(dtype)
        if array.min() < info.min or array.max() > info.max:
            raise OverflowError(f"{column}: values outside {dtype.name}")
    return np.ascontiguousarray(array, dtype=dtype).tobytes()


def decode(column: str, blob: bytes, *, writable: bool = False) -> np.ndarray:
    """The array stored in ``column`` (read-only view of ``blob`` unless ``writable``: then a copy)."""
    array = np.frombuffer(blob, dtype=dtype_of(column))
    return array.copy() if writable else array


def decode_all(column: str, blobs: list[bytes]) -> np.ndarray:
    """Chunks of one column, decoded and joined in order."""
    dtype = dtype_of(column)
    return (np.concatenate([np.frombuffer(b, dtype=dtype) for b in blobs]) if blobs
            else np.zeros(0, dtype=dtype))
