"""The ``clparse`` command, runnable from a checkout as ``python cli.py``; it lives in :mod:`clparse.cli`."""

from clparse.cli import run

if __name__ == "__main__":
    run()
