"""clparse's exceptions: one flat module, one line each."""

from __future__ import annotations


class ClparseError(Exception):
    """Base class of every error clparse raises on purpose."""


class TreebankError(ClparseError):
    """A treebank file is malformed; the message names file, line and column."""

    def __init__(self, path: str, line: int, column: int, problem: str) -> None:
        self.path, self.line, self.column, self.problem = path, line, column, problem
        super().__init__(f"{path}:{line}:{column}: {problem}")


class TokenMismatchError(ClparseError):
    """Gold and test trees of one sentence do not have the same words."""


class DatabaseError(ClparseError):
    """The database is missing, not a clparse database, too new, or damaged."""


class ConfigurationError(ClparseError):
    """An option value is out of range or inconsistent with stored state."""


class LabelClaimedError(ClparseError):
    """A label is being trained by another live process (a second trainer leaves it alone)."""
