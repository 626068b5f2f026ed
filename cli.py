"""The ``clparse`` command, runnable from a checkout as ``python cli.py``; it lives in :mod:`clparse.cli`."""

import sys

from clparse.cli import main

if __name__ == "__main__":
    sys.exit(main())
