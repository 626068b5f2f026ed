"""What ``--dask`` takes, for ``train`` and ``parse`` alike: the address check and Dask itself, imported
only when asked for (one line on how to install it otherwise)."""

from __future__ import annotations

import re
from typing import Any

from clparse.errors import ConfigurationError, ParameterError

INSTALL = ("--dask needs Dask's distributed scheduler: pip install 'clparse[dask]' "
           "(or pip install 'dask[distributed]')")
#: Dask's schemes a client can reach a scheduler by (``inproc://`` only works inside one process).
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")
#: local:N at most: each worker process holds a model or a label; as parse --jobs's own limit.
MAX_LOCAL = 64
_ADDRESS = re.compile(r"(?P<scheme>[a-z][a-z0-9+]*)://(?P<host>\[[0-9A-Fa-f:.%\w]+\]|[^\s:/\[\]]+)"
                      r"(?::(?P<port>\d+))?/?")


def check_address(address: str) -> str:
    """``local:N`` (a LocalCluster of N single-threaded worker processes here) or a scheduler address
    (``tcp://HOST:PORT``). Checked here rather than by Dask: an unknown scheme or a malformed host was a
    traceback from inside Dask after the model loaded, a port out of range a 30 s wait, and local:1000 an
    attempt to start 1,000 processes."""
    usage = "give local:N (N worker processes on this machine) or a scheduler address such as tcp://HOST:8786"
    if re.fullmatch(r"local:[1-9]\d*", address):
        if int(address[6:]) > MAX_LOCAL:
            raise ParameterError("dask", f"{address!r}: local:N starts N worker processes on this machine; "
                                         f"at most {MAX_LOCAL}")
        return address
    match = _ADDRESS.fullmatch(address)
    if match is None:
        raise ParameterError("dask", f"{address!r}: {usage}")
    if match["scheme"] not in SCHEMES:
        raise ParameterError("dask", f"{address!r}: unknown scheme {match['scheme']}:// (Dask's are "
                                     f"{', '.join(SCHEMES)}); {usage}")
    if match["port"] is not None and not 1 <= int(match["port"]) <= 65535:
        raise ParameterError("dask", f"{address!r}: port {match['port']} is not a port (1 to 65535)")
    return address


def require_dask() -> Any:
    """The ``distributed`` module, or one line saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ConfigurationError(INSTALL) from None
    return distributed
