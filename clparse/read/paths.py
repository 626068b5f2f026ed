"""Treebank paths as users give them: files, and directories standing for their treebank files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from clparse.errors import ClparseError

#: What a directory contributes: its files with these suffixes, sorted by name (not recursive).
TREEBANK_SUFFIXES = (".ptb", ".mrg")


def treebank_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files in the order given; a directory becomes its ``*.ptb`` and ``*.mrg`` files in name order."""
    out: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in TREEBANK_SUFFIXES and p.is_file())
            if not found:
                # the PTB's own layout, wsj/00 ... wsj/24: name the sections (not read recursively, so a
                # run's files are the ones given)
                deeper = any(p.suffix in TREEBANK_SUFFIXES for p in path.glob("*/*"))
                hint = f"; its subdirectories do: give them, such as {path / '*'}" if deeper else ""
                raise ClparseError(f"{path}: directory holds no treebank file (*.ptb or *.mrg){hint}")
            out += found
        elif not path.exists():
            # a shell passes a pattern that matches nothing as it is: "gum/train/*.mrg" for *.ptb files
            hint = " (no file matches the pattern)" if any(c in path.name for c in "*?[") else ""
            raise ClparseError(f"{path}: no such file or directory{hint}")
        else:
            out.append(path)
    return out
