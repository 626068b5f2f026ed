"""What ``--dask`` takes, for ``train`` and ``parse`` alike: the address check and Dask itself, imported
only when asked for (one line on how to install it otherwise)."""

from __future__ import annotations

import re
from typing import Any

from clparse.errors import ConfigurationError, ParameterError

INSTALL = ("--dask needs Dask's distributed scheduler: pip install 'clparse[dask]' "
           "(or pip install 'dask[distributed]')")


def check_address(address: str) -> str:
    """``local:N`` (a LocalCluster of N single-threaded worker processes here) or a scheduler address
    (``tcp://HOST:PORT``)."""
    if re.fullmatch(r"local:[1-9]\d*", address) or re.fullmatch(r"[a-z][a-z0-9+]*://\S+", address):
        return address
    raise ParameterError("dask", f"{address!r}: give local:N (N worker processes on this machine) or a "
                                 "scheduler address such as tcp://HOST:8786")


def require_dask() -> Any:
    """The ``distributed`` module, or one line saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ConfigurationError(INSTALL) from None
    return distributed
