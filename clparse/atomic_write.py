"""A file written whole or not at all (``report --plot``, ``treebank preprocess -o``)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

from clparse.errors import ClparseError


def write_whole(path: Path, write: Callable[[Path], object], *, kept: str = "") -> None:
    """``write(where)`` writes the whole content into the file ``where`` (opening and closing it, so a full
    disk is its error), a scratch file beside ``path``, which is then synced and renamed over ``path``:
    Ctrl-C, a full disk or an error raised by ``write`` half-way leave what was at ``path`` as it was (a
    truncated file in its place before), and the scratch file is removed. A device or pipe
    (``/dev/stdout``) is ``where`` itself (renaming over it replaced the device); a symbolic link keeps
    pointing where it did, its target replaced. An OSError is one :class:`~clparse.errors.ClparseError`
    naming ``path``, ``kept`` added where ``path`` was left as it was."""
    if path.exists() and not path.is_file():
        target, scratch = path, None
    else:
        target = path.resolve() if path.is_symlink() else path
        scratch = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    try:
        write(scratch or target)
        if scratch is not None:
            with open(scratch, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(scratch, target)
    except OSError as exc:  # one line naming the file, as the CLI says it
        raise ClparseError(f"{path}: {exc.strerror or exc}{kept if scratch is not None else ''}") from None
    finally:
        if scratch is not None:
            scratch.unlink(missing_ok=True)
