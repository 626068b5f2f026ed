"""The one codec for typed arrays in blobs: a blob column's name ends in its element type.

``indptr_int64`` holds little-endian int64, ``y_int8`` int8, ``margins_float64`` float64, and so
on: the schema declares each blob's type once, in its name, and everything stored or read goes
through :func:`encode` / :func:`decode`, so a dtype is spelled in one place. Little-endian on every
machine, so a database file moves between machines as it is (SQL's ``clparse_*`` functions and
``docs/schema.md`` read it the same way).

Every row holding blobs also holds their SHA-256 (:func:`checksum`, over the row's key and blobs
as :data:`CHECKSUMMED` lists them), computed where the row is written; :func:`verified` recomputes
it where the row is read, before any decoded array reaches compiled code.

>>> decode("y_int8", encode("y_int8", [1, -1]))
array([ 1, -1], dtype=int8)
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from clparse.errors import DatabaseError
from clparse.store.database import DAMAGED

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


def decode(column: str, blob: bytes, *, writable: bool = False, where: str | None = None) -> np.ndarray:
    """The array stored in ``column`` (read-only view of ``blob`` unless ``writable``: then a copy).

    A blob whose length is not a whole number of elements is refused with a :class:`DatabaseError`
    naming ``where`` (the file and row, e.g. ``db.sqlite: feature_rows chunk 3``) or the column."""
    dtype = dtype_of(column)
    if blob is None or len(blob) % dtype.itemsize:
        size = "NULL" if blob is None else f"{len(blob)} bytes"
        raise DatabaseError(f"{where or column}: {column} holds {size}, not a whole number of {dtype.name} "
                            f"elements; {DAMAGED}")
    array = np.frombuffer(blob, dtype=dtype)
    return array.copy() if writable else array


def decode_all(column: str, blobs: list[bytes]) -> np.ndarray:
    """Chunks of one column, decoded and joined in order."""
    dtype = dtype_of(column)
    return (np.concatenate([np.frombuffer(b, dtype=dtype) for b in blobs]) if blobs
            else np.zeros(0, dtype=dtype))


# ---------------------------------------------------------------- checksums

#: The columns each blob table's ``sha256`` (``label_training``: ``margins_sha256``) covers, in order:
#: the row's key and counts, then its blobs. Revision 0008 added the columns and filled them in.
CHECKSUMMED: dict[str, tuple[str, ...]] = {
    "feature_rows": ("run_id", "chunk", "first_row", "row_count", "indptr_int64", "indices_int32"),
    "label_examples": ("label_id", "chunk", "first_example", "example_count", "row_int32", "y_int8",
                       "multiplicity_int32"),
    "margin_checkpoints": ("label_id", "iteration", "margins_float64"),
    "label_training": ("label_id", "margins_iteration", "margins_float64"),
}
#: The column holding the checksum in each of those tables.
CHECKSUM_COLUMN = {"feature_rows": "sha256", "label_examples": "sha256", "margin_checkpoints": "sha256",
                   "label_training": "margins_sha256"}

_INT = struct.Struct("<q")


def checksum(*parts: int | bytes) -> str:
    """SHA-256 (hex) of ``parts`` in a fixed packing: an integer as 8 bytes (little-endian, signed), a
    blob as its length in 8 such bytes and then its bytes.

    >>> checksum(1, b"")
    '4cbbd8ca5215b8d161aec181a74b694f4e24b001d5b081dc0030ed797a8973e0'
    """
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, (bytes, bytearray, memoryview)):
            h.update(_INT.pack(len(part)))
            h.update(part)
        else:
            h.update(_INT.pack(int(part)))
    return h.hexdigest()


def row_checksum(table: str, row: Mapping[Any, Any]) -> str:
    """The checksum of a row of one of the :data:`CHECKSUMMED` tables (its values by column name)."""
    return checksum(*(row[column] for column in CHECKSUMMED[table]))


def verified(table: str, row: Mapping[Any, Any], where: str) -> None:
    """Refuse a row whose stored checksum is not that of its values (``where`` names the file and row)."""
    if row[CHECKSUM_COLUMN[table]] != row_checksum(table, row):
        raise DatabaseError(f"{where} fails its checksum; {DAMAGED}")
