"""The ``clparse`` command line: a thin click layer over :mod:`clparse.api`, one module per command group.

Every command parses its options, calls one library function and prints the result. Errors clparse
raises on purpose (bad files, bad settings) become one ``Error: ...`` line on stderr and exit status 1,
never a traceback; a bad parameter names its option (exit status 2).
"""

from clparse.cli import (  # noqa: F401 (each module registers its commands)
    browse,
    calibration,
    combination,
    database,
    evaluation,
    explain,
    parsing,
    training,
    treebank,
)
from clparse.cli.core import main

__all__ = ["main"]
