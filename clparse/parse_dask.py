"""``parse --dask ADDRESS``: sentences parsed on a Dask cluster, results handed back in input order.

The client (this process) reads the input and submits it in chunks of consecutive sentences
(:data:`CHUNK`) as tasks of :func:`parse_chunk`; at most :data:`WINDOW` chunks per worker thread are
in flight or waiting to be handed back, so memory stays bounded however long the input. A task names
the database by its **path**: every worker opens that path itself, read-only, so the workers must see
the database at the same path (a shared file system, or a copy at the same place on every node). A
worker process rebuilds the parser once, at the given Θ̂ and search options, and keeps it for the
next chunks (:data:`_PARSERS`; a worker's threads take turns with it); it sends back the same plain
data per sentence as ``parse --jobs`` (:func:`clparse.parse_jobs.plain`: each tree's PTB text and
its phrases' confidences, k-best trees, scores and offsets included), from which the client
rebuilds each :class:`~clparse.output.ParseResult` and yields them strictly in input order: the output
is the same as one process's, byte for byte.

A worker lost mid-chunk (killed, its node gone) is Dask's to handle: the scheduler runs the chunk again
on another worker (the result is the same), and gives up after its ``allowed-failures``; a chunk that
fails (a worker cannot open the database, a parse raises) or is given up stops the run with one
:class:`~clparse.errors.ClparseError` naming the sentences and the worker, and the chunks in flight are
cancelled. Dask is imported only here, and only when used; nothing here imports the trainer.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from clparse.dask_address import check_address, check_scheduler, close_quietly, dask_connect, short_line
from clparse.errors import ClparseError, ParameterError
from clparse.parse_jobs import Payload, open_worker_parser, plain, rebuilt, take_chunk, worker_options

CHUNK = 32  # sentences per task: large enough to amortize a task's overhead, small enough to stream
WINDOW = 4  # chunks per worker thread submitted and not yet yielded, at most
REFRESH = 5.0  # seconds between asking the scheduler how many worker threads it has
CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler before giving up
CACHED = 2  # parsers a worker process keeps (a long-lived cluster may serve several databases or Θ̂)

#: In a worker process: the parsers rebuilt so far, by (database, its file's identity, Θ̂, options).
_PARSERS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_LOCK = threading.Lock()


# --------------------------------------------------------------------- the worker side


def _identity(db: str) -> tuple[int, int, int]:
    """The database file as this worker sees it: a file replaced (prepared again) is another parser."""
    stat = os.stat(db)
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def parse_chunk(db: str, thetas: float | dict[str, float], options: dict[str, Any],
                sentences: list[Any]) -> tuple[str, Any, str]:
    """A task: parse ``sentences`` with the parser of ``db`` at ``thetas`` and ``options`` (rebuilt once
    per worker process, read-only). ``("done", payloads, worker)``, or ``("error", problem, worker)``:
    failures come back as one line, never as a traceback to unpickle."""
    from clparse.parse_jobs import _describe

    where = _worker_address()
    try:
        key = (db, _identity(db), repr(thetas), repr(sorted(options.items())))
    except FileNotFoundError:
        return "error", f"could not start: {db} is not there (every worker must see the database at the " \
                        "path the client gives)", where
    except OSError as exc:
        return "error", f"could not start: {_describe(exc, db)}", where
    with _LOCK:  # a worker with several threads: one parser per key, used by one thread at a time
        parser = _PARSERS.get(key)
        if parser is None:
            try:
                parser = open_worker_parser(db, thetas, options)
            except Exception as exc:
                return "error", f"could not start: {_describe(exc, db)}", where
            _PARSERS[key] = parser
            while len(_PARSERS) > CACHED:
                _PARSERS.popitem(last=False)
        _PARSERS.move_to_end(key)
        try:
            payloads: list[Payload] = [plain(parser.parse(sentence)) for sentence in sentences]
        except Exception as exc:
            return "error", _describe(exc, db), where
    return "done", payloads, where


def waited(client: Any) -> bool:
    """Does the scheduler have no worker (tasks wait for one)?"""
    try:
        return not client.nthreads()
    except Exception:  # the scheduler gone: said by the caller
        return False


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except Exception:  # not on a worker (called directly)
        return "?"


# --------------------------------------------------------------------- the client side


def connect(address: str) -> tuple[Any, Callable[[bool], None]]:
    """:func:`~clparse.dask_address.dask_connect` for parsing: a Client for ``address``, and its close."""
    return dask_connect(address, CONNECT_TIMEOUT, "parse")


class _Window:
    """How many chunks may be in flight: :data:`WINDOW` per worker thread the scheduler knows of (at least
    one thread: tasks wait for workers to arrive), asked again every :data:`REFRESH` seconds at most."""

    def __init__(self, client: Any) -> None:
        self.client, self.size, self.asked = client, WINDOW, -REFRESH

    def __call__(self) -> int:
        if time.monotonic() - self.asked >= REFRESH:
            self.asked = time.monotonic()
            try:
                self.size = WINDOW * max(1, sum(self.client.nthreads().values()))
            except Exception:  # the scheduler gone: the futures in flight will say so
                pass
        return self.size


def parse_on_cluster(parser: Any, sentences: Iterator[tuple[Sequence[Any], Any]], address: str, *,
                     chunk: int | None = None,
                     notice: Callable[[str], object] | None = None) -> Iterator[tuple[Any, Any]]:
    """(result, extra) for each (sentence, extra) of ``sentences``, in their order, parsed on the Dask
    cluster at ``address``, whose workers each rebuild ``parser`` (a :class:`~clparse.parser.Parser` opened
    from a database) from the same database path.

    An error raised while reading ``sentences`` is raised after every sentence read before it has been
    yielded, as parsing one at a time would. ``chunk``: sentences per task (default :data:`CHUNK`).
    ``notice``: told once a chunk has waited a second on a scheduler with no worker (tasks wait for one).
    """
    check_address(address)
    if parser.source is None:
        raise ParameterError("dask", "parsing on a cluster needs a parser opened from a database "
                                     "(open_parser)")
    model = parser.model
    thetas: float | dict[str, float] = dict(model.label_thetas) if model.label_thetas else float(model.theta)
    options = worker_options(parser)
    db = os.path.abspath(str(parser.source))
    size = chunk or CHUNK
    client, close = connect(address)
    window = _Window(client)
    run = uuid.uuid4().hex[:12]
    inflight: deque[tuple[Any, int, list[Any]]] = deque()  # (future, first sentence's number, extras)
    read = submitted = 0
    exhausted = False
    failure: BaseException | None = None  # raised by the input, after what came before it is yielded
    hurried = True  # until every chunk is in: Ctrl-C, an error, or a caller that stops reading
    try:
        while True:
            while not exhausted and len(inflight) < window():
                batch, extras, exhausted, failure = take_chunk(sentences, size)
                if not batch:
                    break
                future = client.submit(parse_chunk, db, thetas, options, batch, pure=False,
                                       key=f"clparse-parse-{run}-{submitted}")
                inflight.append((future, read + 1, extras))
                read += len(batch)
                submitted += 1
            if not inflight:
                break
            future, first, extras = inflight.popleft()
            payloads = _result(future, first, len(extras), address, client, notice)
            for payload, extra in zip(payloads, extras):
                yield rebuilt(payload), extra
        hurried = False
    finally:
        for future, _, _ in inflight:
            future.cancel()
        close_quietly(client, close, hurried)
    if failure is not None:
        raise failure


def _result(future: Any, first: int, count: int, address: str, client: Any = None,
            notice: Callable[[str], object] | None = None) -> list[Payload]:
    """A chunk's payloads; its failure (or Dask's, e.g. its workers lost too often) is one ClparseError, and
    so is the scheduler's loss, said at once: the client waited 30 s to reconnect, then logged a Dask
    error line before ours."""
    where = f"sentences {first}–{first + count - 1}" if count > 1 else f"sentence {first}"
    try:
        while True:
            try:
                status, value, worker = future.result(timeout=1.0)
                break
            except TimeoutError:
                check_scheduler(client, address, f" while parsing {where}")
                if notice is not None and waited(client):
                    # tasks wait for workers to join (an adaptive cluster): said once, not a silent stall
                    notice(f"the Dask scheduler at {address} has no worker yet: waiting for one to join")
                    notice = None
    except (KeyboardInterrupt, SystemExit, GeneratorExit, ClparseError):
        raise
    except BaseException as exc:  # KilledWorker, a lost scheduler (cancelled futures), ...
        check_scheduler(client, address, f" while parsing {where}")  # its futures were cancelled: say why
        raise ClparseError(f"parsing {where} on the Dask cluster at {address} failed: "
                           f"{type(exc).__name__}: {short_line(exc)}") from None
    if status == "error":
        raise ClparseError(f"Dask worker {worker}, parsing {where}: {short_line(value)}")
    payloads: list[Payload] = value
    return payloads
