"""Data shipped with clparse: the bundled GUM sample treebank (CC BY, see sample/README.md)."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

SAMPLE_SPLITS = ("train", "dev")


def sample_path(split: str) -> Path:
    """Path of the bundled sample's ``train`` or ``dev`` file (inside the installed package)."""
    if split not in SAMPLE_SPLITS:
        raise ValueError(f"unknown sample split {split!r}; choose one of {', '.join(SAMPLE_SPLITS)}")
    resource = files("clparse.data").joinpath("sample").joinpath(f"{split}.ptb")  # one part per call (3.10)
    with as_file(resource) as path:  # a real file for a normal (non-zip) install
        return Path(path)
