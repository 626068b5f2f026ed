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


class NotCalibratedError(ConfigurationError):
    """Θ̂ "best" was asked of a database with no calibration; ``path`` names it (callers that name a Θ̂
    otherwise than ``--theta``, such as a combination's members, give their own advice)."""

    def __init__(self, path: object, message: str) -> None:
        self.path = path
        super().__init__(message)


class LabelClaimedError(ClparseError):
    """A label is being trained by another live process (a second trainer leaves it alone)."""


class ParameterError(ConfigurationError):
    """A parameter of a library call is out of range or inconsistent; ``parameter`` is its Python name,
    which the command line maps to its option (``until_theta`` → ``--until-theta``)."""

    def __init__(self, parameter: str, problem: str) -> None:
        self.parameter, self.problem = parameter, problem
        super().__init__(f"{parameter}: {problem}")


class BracketError(ClparseError):
    """Known brackets to parse under that no tree can keep, or that do not fit the sentence."""


class RunningTextWarning(UserWarning):
    """A sentence given as a string of tokens looks like running text (``"The dog barked."``): it is split
    at spaces only, so the punctuation stays on the words; ``Parser.parse_text`` splits running text."""
