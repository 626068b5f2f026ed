"""``parse --jobs N``: sentences parsed in N worker processes, results handed back in input order.

The parent reads the input and sends it in chunks of consecutive sentences to the workers (each
holds at most :data:`AHEAD` chunks not yet handed back, and at most :data:`WINDOW` chunks per
worker are read ahead of the output, so memory stays bounded however long the input; the last
sentences go out in smaller chunks so that the workers finish together: :class:`Lookahead`). Where the
system can fork safely (Linux, the BSDs) and the parent runs no other thread, every worker is a fork
of the parent made after the parser was rebuilt: it starts with the parent's imports, model and
compiled tables (the parent holds no open SQLite handle then, and the kernels hold no threads; a
spawned worker spent about a second on imports and the model before its first sentence, which held
``--jobs 2`` on GUM dev ≤ 15 to 1.4×); each still loads numba's cached kernels and, for untagged
input, the tagger on its first sentence. Elsewhere (:func:`start_method`) each is a spawned
interpreter that rebuilds the parser once from the database, read-only, at the same Θ̂ and search
options (k-best included). Either way it sends back plain data per sentence (:func:`plain`: every tree as PTB
text, scores, confidences, tokens, tags, offsets, fallback, completion, pops). The parent rebuilds each
:class:`~clparse.output.ParseResult` from it and yields them strictly in input order, so the output
is the same as one process's, byte for byte, in every format.

A worker that cannot start, fails or dies (even by SIGKILL) stops the run with one
:class:`~clparse.errors.ClparseError` naming it, never a hang; the others are stopped too. Workers
ignore Ctrl-C (the terminal sends it to the whole process group): the parent stops them, and a
worker whose parent died is ended by the kernel. Nothing here imports the trainer.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, SpawnContext
from pathlib import Path
from typing import Any

from clparse.errors import ClparseError, ParameterError
from clparse.interrupt import die_with_parent
from clparse.worker_exit import worker_exit

CHUNK = 32  # sentences per message: large enough to amortize the pickling, small enough to stream
AHEAD = 2  # chunks a worker holds at most (one parsing, one waiting), so it never idles between them
WINDOW = 4  # chunks per worker read and not yet yielded, at most: a slow chunk holds the others this far
#: How workers start, "fork" or "spawn"; None: :func:`start_method` decides per run.
START: str | None = None
#: Systems where forking a process that has loaded numpy and numba's LLVM is safe (macOS lists fork too,
#: but its system libraries may crash or hang a forked child: Python spawns there by default).
FORK_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd")


#: Said when a parse that runs in one process alone (known brackets, a combination) is given --jobs or --dask.
ONE_PROCESS = "with --constraints or a combination, parse in one process (--jobs 1, no --dask)"


def refuse_combination(db: str | Path, jobs: int, dask: str | None) -> None:
    """A database of ``clparse combine`` given ``jobs`` > 1 or ``dask``: refused from its tables alone,
    before its members' models load (it was said only once they had: seconds on a big run)."""
    if jobs == 1 and dask is None:
        return
    from clparse.store import reading
    from clparse.store.database import Database

    # read-only opening checks the file first: a wrong path or an old schema named as the parse names it
    with Database.of(db, readonly=True).raw() as connection:
        combined = reading.is_combination(connection)
    if combined:
        raise ParameterError("jobs", ONE_PROCESS)


def start_method() -> str:
    """Fork where the system allows it and this process runs no other thread (a fork copies only the
    calling thread, so a lock another thread holds, the import lock or logging's, would stay held in the
    child for ever); otherwise spawn."""
    if START is not None:
        return START
    forkable = sys.platform.startswith(FORK_PLATFORMS) and "fork" in multiprocessing.get_all_start_methods()
    return "fork" if forkable and threading.active_count() == 1 else "spawn"

#: One sentence's result as plain data (:func:`plain`): tokens with tags, offsets, characters, fallback,
#: completion, pops, the K asked for, and per tree, best first, its PTB text, score, derivation confidences
#: and per-phrase confidences.
Payload = tuple[list[tuple[str, str]], Any, Any, Any, Any, int, int, str | None,
                list[tuple[str, Any, tuple[float, ...], list[Any]]]]


# --------------------------------------------------------------------- the worker side


def _describe(exc: BaseException, db: str) -> str:
    if isinstance(exc, ClparseError):
        return str(exc)
    from clparse.store.database import describe

    return describe(exc, db)


def worker_options(parser: Any) -> dict[str, Any]:
    """What a worker rebuilds the parser with besides the database and Θ̂: the search options, and the tag
    chooser the parent parses with (``chooser_weights``: its weights, or None). The parent's own chooser,
    not one the worker reads from the database: after ``parser.options.aggregator`` changed, or with a
    chooser set by hand, the stored one is not the parent's."""
    chooser = parser.active_chooser
    return {**asdict(parser.options), "chooser_weights": None if chooser is None else list(chooser.weights)}


def open_worker_parser(db: str, thetas: float | dict[str, float], options: dict[str, Any]) -> Any:
    """The parser a worker uses: rebuilt from ``db`` (read-only) at ``thetas`` (one Θ̂, or one per label),
    with the stored tagger loaded when first needed, as :meth:`Parser.from_db` does, and the parent's tag
    chooser (:func:`worker_options`)."""
    from clparse.parser import Parser, SearchOptions
    from clparse.rebuild.model import load_model
    from clparse.store.database import Database
    from clparse.tag.choice import TagChooser

    search = {name: value for name, value in options.items() if name != "chooser_weights"}
    weights = options.get("chooser_weights")
    with Database(db, readonly=True) as database:
        parser = Parser.from_model(database, load_model(database, thetas), SearchOptions(**search))
    parser.chooser = None if weights is None else TagChooser(tuple(float(w) for w in weights))
    parser._tagger_db = parser.source = Path(os.path.abspath(db))  # as from_db's, for a per-label Θ̂ too
    return parser


def worker(parent: int, conn: Connection, db: str, thetas: float | dict[str, float],
           options: dict[str, Any], parser: Any = None, inherited: Sequence[Connection] = ()) -> None:
    """A worker process: open the parser (unless forked with the parent's, ``parser``), then parse each
    chunk received until told to stop (None). ``inherited``: the parent's ends of the pipes made before
    this fork, its own included, closed here so that only the parent holds them (else a worker whose
    parent died would wait for its next message for ever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a fork inherits its caller's handler: terminate() ends it
    die_with_parent(parent)
    for other in inherited:
        other.close()
    try:
        if parser is None:
            parser = open_worker_parser(db, thetas, options)
    except BaseException as exc:  # told to the parent, which stops the run with it
        conn.send(("error", f"could not start: {_describe(exc, db)}"))
        conn.close()
        sys.exit(1)
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def receive() -> None:
        # A thread reads the parent's messages at once, so neither side can block the other with a full
        # pipe (the parent sending a chunk while this process sends a chunk's results).
        try:
            while True:
                message = conn.recv()
                inbox.put(message)
                if message is None:
                    return
        except (EOFError, OSError):
            inbox.put(None)

    threading.Thread(target=receive, daemon=True).start()
    while (task := inbox.get()) is not None:
        number, sentences = task
        try:
            results = [plain(parser.parse(sentence)) for sentence in sentences]
        except BaseException as exc:
            conn.send(("error", _describe(exc, db)))
            conn.close()
            sys.exit(1)
        conn.send(("done", number, results))
    conn.close()


def plain(result: Any) -> Payload:
    """A :class:`~clparse.output.ParseResult` as plain data: no model object or derivation crosses
    processes, and no tree object either (pickling one recurses once per level: a deep tree would hit
    the recursion limit), but its PTB text. What every output format reads of a result and nothing more
    (:func:`clparse.output.to_dict`'s constituent records cost twice as much to build and send)."""
    from clparse.output import format_tree

    trees = [(format_tree(parsed.tree), parsed.score, parsed.confidences, parsed.confidence_per_phrase())
             for parsed in result.trees]
    return (result.tagged, result.offsets, result.text, result.fallback, result.completion, result.pops,
            result.kbest, result.aggregator, trees)


def rebuilt(payload: Payload) -> Any:
    """The :class:`~clparse.output.ParseResult` of :func:`plain`'s data (trees read back from their PTB
    text, which gives the same text again; ``(ROOT)`` is the empty sentence's tree)."""
    from clparse.output import ParsedTree, ParseResult
    from clparse.read.ptb import iter_trees_from_lines

    tagged, offsets, text, fallback, completion, pops, kbest, aggregator, entries = payload
    trees = []
    for ptb, score, confidences, phrases in entries:
        (tree,) = iter_trees_from_lines([ptb], "<result>", allow_empty=True)
        trees.append(ParsedTree(tree, score, confidences, phrase_confidences=phrases))
    return ParseResult(trees[0].tree, tagged, fallback, pops, completion, trees=trees, offsets=offsets,
                       text=text, kbest=kbest, aggregator=aggregator)


# --------------------------------------------------------------------- the parent side


@dataclass
class _Worker:
    number: int  # 1..jobs, as the error messages name it
    process: Any
    conn: Connection
    chunks: deque[int] = field(default_factory=deque)  # chunk numbers sent and not yet received


@dataclass
class _Chunk:
    first: int  # the number (1-based) of its first sentence in the input
    extras: list[Any]  # per sentence, what the caller gave beside it (handed back with its result)
    results: list[Payload] | None = None


def take_chunk(sentences: Iterator[tuple[Sequence[Any], Any]],
               size: int) -> tuple[list[Sequence[Any]], list[Any], bool, Exception | None]:
    """The next ``size`` (sentence, extra) pairs of ``sentences`` at most, as (sentences, extras, whether
    the input has ended, the input's own error if reading it raised: the caller raises it in its place,
    after every sentence read before it)."""
    batch: list[Sequence[Any]] = []
    extras: list[Any] = []
    try:
        for sentence, extra in sentences:
            batch.append(sentence)
            extras.append(extra)
            if len(batch) == size:
                return batch, extras, False, None
    except Exception as exc:
        return batch, extras, True, exc
    return batch, extras, True, None


class Lookahead:
    """The input read ahead of the chunks sent, so that the last chunks can be smaller.

    The first chunks ramp up, 1, 2, 4, ... sentences, so that the first trees come after one sentence's
    parse rather than a whole chunk's (and a pipe is waited on for a few lines, not ``chunk × (jobs + 1)``).
    While the input lasts, every chunk after that has ``chunk`` sentences, taken from up to
    ``size × (jobs + 1)`` read ahead, ``size`` the chunk's own; once the input has ended, what
    is left is dealt in chunks of ``remaining / (2 × jobs)`` sentences, at least one (guided
    self-scheduling), so the workers run out of work together instead of one waiting up to a whole
    chunk for the other (about 0.1 s of a 2.8 s run on GUM dev ≤ 15 at chunks of 32). The input's own
    error, if reading it raised, is kept in ``failure`` for the caller to raise after every sentence
    read before it.
    """

    def __init__(self, sentences: Iterator[tuple[Sequence[Any], Any]], chunk: int, jobs: int) -> None:
        self._sentences = sentences
        self._chunk = chunk
        self._jobs = jobs
        self._size = 1  # the next chunk's size while the input lasts: doubles up to ``chunk``
        self._buffer: deque[tuple[Sequence[Any], Any]] = deque()
        self.ended = False  # nothing more to read (the buffer may still hold sentences)
        self.failure: Exception | None = None

    @property
    def exhausted(self) -> bool:
        """Every sentence of the input has been read and taken."""
        return self.ended and not self._buffer

    def _fill(self) -> None:
        while not self.ended and len(self._buffer) < self._size * (self._jobs + 1):
            try:
                self._buffer.append(next(self._sentences))
            except StopIteration:
                self.ended = True
            except Exception as exc:  # raised by the caller once everything before it is yielded
                self.ended, self.failure = True, exc

    def take(self) -> tuple[list[Sequence[Any]], list[Any]]:
        """The next chunk's sentences and extras (empty once the input is exhausted)."""
        self._fill()
        size, self._size = self._size, min(self._chunk, 2 * self._size)
        if self.ended:
            size = max(1, min(size, -(-len(self._buffer) // (2 * self._jobs))))
        batch = [self._buffer.popleft() for _ in range(min(size, len(self._buffer)))]
        return [sentence for sentence, _ in batch], [extra for _, extra in batch]


def parse_parallel(parser: Any, sentences: Iterator[tuple[Sequence[Any], Any]], jobs: int, *,
                   chunk: int | None = None, start: str | None = None) -> Iterator[tuple[Any, Any]]:
    """(result, extra) for each (sentence, extra) of ``sentences``, in their order, parsed in ``jobs``
    processes with ``parser`` (a :class:`~clparse.parser.Parser` opened from a database): forks of this
    process, or interpreters each rebuilding it (``start``: "fork" or "spawn", default
    :func:`start_method`'s choice).

    An error raised while reading ``sentences`` is raised after every sentence read before it has been
    yielded, as parsing one at a time would. ``chunk``: sentences per message (default :data:`CHUNK`).
    """
    if jobs < 1:
        raise ParameterError("jobs", f"must be at least 1, got {jobs}")
    if parser.source is None:
        raise ParameterError("jobs", "parallel parsing needs a parser opened from a database (open_parser)")
    model = parser.model
    thetas: float | dict[str, float] = dict(model.label_thetas) if model.label_thetas else float(model.theta)
    options = worker_options(parser)
    chunk = chunk or CHUNK
    start = start or start_method()
    if start not in ("fork", "spawn"):
        raise ParameterError("start", f"must be fork or spawn, got {start!r}")
    context: ForkContext | SpawnContext = (multiprocessing.get_context("fork") if start == "fork"
                                           else multiprocessing.get_context("spawn"))
    workers: list[_Worker] = []
    chunks: dict[int, _Chunk] = {}
    sent = handed = 0  # chunks sent to workers, chunks yielded
    read = 0  # sentences read
    ahead = Lookahead(sentences, chunk, jobs)
    finished = False
    if start == "fork":
        # The objects alive now (the model's among them) go to the collector's permanent generation, so
        # that no collection in a worker writes to their pages: each write copies a 4 KiB page the fork
        # shared (on GUM dev ≤ 15, `--jobs 2` took 2.96 s with them, 2.86 s without).
        gc.freeze()
    try:
        for number in range(1, jobs + 1):
            ours, theirs = context.Pipe(duplex=True)
            forked = (parser, [*(w.conn for w in workers), ours]) if start == "fork" else ()
            process = context.Process(target=worker, args=(os.getpid(), theirs, str(parser.source), thetas,
                                                           options, *forked),
                                      name=f"clparse-parse-{number}", daemon=True)
            process.start()
            theirs.close()
            workers.append(_Worker(number, process, ours))
        while True:
            while not ahead.exhausted and sent - handed < WINDOW * jobs and \
                    (idle := [w for w in workers if len(w.chunks) < AHEAD]):
                batch, extras = ahead.take()
                if not batch:
                    break
                target = min(idle, key=lambda w: len(w.chunks))
                chunks[sent] = _Chunk(read + 1, extras)
                read += len(batch)
                target.chunks.append(sent)
                try:
                    target.conn.send((sent, batch))
                except OSError:  # it died since it was last heard from: say how (raises)
                    _receive(target, chunks, jobs)
                    raise ClparseError(f"parse worker {target.number} of {jobs} stopped reading") from None
                sent += 1
            while handed in chunks and chunks[handed].results is not None:
                done = chunks.pop(handed)
                handed += 1
                assert done.results is not None
                for payload, extra in zip(done.results, done.extras):
                    yield rebuilt(payload), extra
            if ahead.exhausted and handed == sent:
                break
            busy = [w for w in workers if w.chunks]
            if not busy:  # everything sent came back and was handed on (the window had been full): send more
                continue
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in workers], timeout=5.0)
            for w in workers:
                if w.conn in ready or w.process.sentinel in ready:
                    _receive(w, chunks, jobs)
        finished = True
    finally:
        if start == "fork":
            gc.unfreeze()  # only now: a collection here before the workers end would copy pages as well
        _stop(workers, gently=finished)
    if ahead.failure is not None:
        raise ahead.failure


def _receive(w: _Worker, chunks: dict[int, _Chunk], jobs: int) -> None:
    """Take what worker ``w`` sent (every message waiting); a worker that failed or died raises."""
    try:
        while w.conn.poll():
            message = w.conn.recv()
            if message[0] == "error":
                raise ClparseError(f"parse worker {w.number} of {jobs}: {message[1]}")
            _, number, results = message
            w.chunks.remove(number)
            chunks[number].results = results
    except (EOFError, OSError):
        pass  # the pipe closed: the worker is gone, said below
    else:
        if w.process.is_alive():
            return  # everything it sent is taken, and it is still working
    w.process.join(timeout=5.0)
    how = worker_exit(w.process.exitcode)
    where = ""
    if w.chunks:
        lost = [chunks[n] for n in w.chunks if n in chunks]
        if lost:
            first = lost[0].first
            last = lost[-1].first + len(lost[-1].extras) - 1
            where = f" while parsing sentences {first}–{last}"
    raise ClparseError(f"parse worker {w.number} of {jobs} died{where}: {how}")


def _stop(workers: list[_Worker], gently: bool) -> None:
    """End the workers: asked to stop after a finished run, terminated otherwise (an error, Ctrl-C, or a
    caller that stopped reading the results)."""
    for w in workers:
        if gently:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        elif w.process.is_alive():
            w.process.terminate()
    for w in workers:
        w.process.join(timeout=10.0 if gently else 2.0)
        if w.process.is_alive():
            w.process.kill()
            w.process.join(timeout=2.0)
        w.conn.close()
