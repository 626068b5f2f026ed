"""What ``--dask`` takes, for ``train`` and ``parse`` alike: the address check, Dask itself, imported
only when asked for (one line on how to install it otherwise), the client and its lost scheduler said in
one line. Nothing here imports the trainer: the parser uses it too."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import Any

from clparse.errors import ClparseError, ConfigurationError, ParameterError

INSTALL = ("--dask needs Dask's distributed scheduler: pip install 'clparse[dask]' "
           "(or pip install 'dask[distributed]')")
#: Dask's schemes a client can reach a scheduler by (``inproc://`` only works inside one process).
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")
#: local:N at most: each worker process holds a model or a label; as parse --jobs's own limit.
MAX_LOCAL = 64
#: Seconds a local worker is given to stop when a run stops early (Ctrl-C, an error): a chunk still
#: parsing held its graceful close for Dask's 4 s (80 % of the Nanny's 5 s) before the kill.
STOP_TIMEOUT = 0.25
#: A client's statuses while it has its scheduler; any other (connecting, closing, closed) has lost it.
LIVE = ("running", "newly-created")
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


def dask_connect(address: str, timeout: float, doing: str) -> tuple[Any, Callable[[bool], None]]:
    """A Client for ``address`` (``local:N`` starts a LocalCluster here) and a function that closes it
    (``hurried``: the run stopped early, so local workers still busy are killed, not waited for); a local
    cluster that cannot start or a scheduler that cannot be reached within ``timeout`` seconds is one
    :class:`~clparse.errors.ClparseError`. ``doing``: the verb its advice names (``parse``, ``train``)."""
    distributed = require_dask()
    if address.startswith("local:"):
        try:
            cluster = distributed.LocalCluster(n_workers=int(address.split(":")[1]), threads_per_worker=1,
                                               processes=True, dashboard_address=None,
                                               # its workers share our terminal: Ctrl-C reaches them too,
                                               # and each logged cancelled tasks and a nanny's kill
                                               silence_logs=logging.ERROR)
        except Exception as exc:  # a traceback ending in "RuntimeError: Nanny failed to start."
            why = short_line(exc).rstrip(".")
            raise ClparseError(f"could not start the local Dask cluster {address}: {why}; from a script, "
                               f"{doing} under `if __name__ == '__main__':` (each worker is a new Python "
                               "that imports the script)") from None
        client = distributed.Client(cluster, set_as_default=False)

        def close_local(hurried: bool) -> None:
            client.close()
            if hurried:
                _stop_workers(cluster)
            cluster.close()

        return client, close_local
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # OSError, TimeoutError, or Dask's ValueError for an address it cannot use
        raise ClparseError(f"cannot reach the Dask scheduler at {address}: {short_line(exc)}") from None
    return client, lambda hurried: client.close()  # another's workers: their tasks were cancelled


async def _close_nannies(nannies: list[Any], timeout: float) -> None:
    await asyncio.gather(*(nanny.close(timeout=timeout) for nanny in nannies), return_exceptions=True)


def _stop_workers(cluster: Any) -> None:
    """Stop a LocalCluster's workers within :data:`STOP_TIMEOUT`, killing those still busy (their
    threads cannot be interrupted, and the results are not wanted)."""
    try:
        cluster.sync(_close_nannies, list(cluster.workers.values()), STOP_TIMEOUT)
    except Exception:  # Dask's internals changed: its own close still ends them, only slower
        pass


def short_line(exc: object) -> str:
    """``exc`` as one line of at most 300 characters (Dask's messages span lines)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def check_scheduler(client: Any, address: str, during: str = "", advice: str = "",
                    closed: bool = False) -> None:
    """One ClparseError once ``client`` has lost its scheduler (or, ``closed``, given up reconnecting to
    it), said at once in our words: Dask reconnected for a while, cancelled every future and logged its
    own error first. ``during``, ``advice``: what the message says before and after the client's status."""
    status = str(getattr(client, "status", "running"))
    if closed or status not in LIVE:
        raise ClparseError(f"lost the Dask scheduler at {address}{during} (client {status}){advice}") \
            from None


def close_quietly(client: Any, close: Callable[[bool], None], hurried: bool) -> None:
    """``close(hurried)``; with the scheduler gone, Dask's client logs its reconnect's traceback on closing
    (our one line says it): that log is silenced first."""
    if str(getattr(client, "status", "running")) != "running":
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
    close(hurried)
