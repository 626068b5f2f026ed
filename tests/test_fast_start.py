"""Fast start (issue 26): a parser loads in one read transaction without SQLAlchemy, reading of the
stored features only those its trees test, and parses exactly as one over every stored feature."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest

from clparse.errors import DatabaseError
from clparse.forest import Forest
from clparse.parser import Parser
from clparse.rebuild.model import load_model, features_tested
from clparse.store.database import Database
from clparse.store.models import Models
from clparse.store.runs import Runs
from clparse.tag.stored import tagged_words

THETA = 4.0


def test_parsing_imports_no_sqlalchemy(trained_db: Path) -> None:
    code = ("import sys\nfrom clparse.parser import Parser\n"
            f"parser = Parser.from_db({str(trained_db)!r}, theta={THETA}, beam=1)\n"
            "parser.parse_tagged([('The', 'DT'), ('dog', 'NN'), ('barked', 'VBD')])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'alembic', 'dask')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_the_parse_command_imports_no_sqlalchemy(trained_db: Path, tmp_path: Path) -> None:
    # api.open_parser's checks (readable, a combination?) read through APSW too: SQLAlchemy's import
    # alone was 0.2 s of the first parsed sentence.
    one = tmp_path / "one.txt"
    one.write_text("The/DT dog/NN barked/VBD\n", encoding="utf-8")
    code = ("import sys\nfrom clparse.cli import main\n"
            f"sys.argv = ['clparse', 'parse', '--db', {str(trained_db)!r}, '--theta', '{THETA}', "
            f"'--input-format', 'tagged', {str(one)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'alembic')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.splitlines()[-1] == "[]" and out.startswith("(ROOT")


def test_parsing_leaves_scipy_linalg_unimported_and_usable(trained_db: Path) -> None:
    # numba's BLAS probe would import scipy.linalg on the first compiled call (0.2-0.4 s of the first
    # sentence); answered without it, scipy.linalg and a jitted np.dot still work when asked for later.
    code = ("import sys\nfrom clparse.parser import Parser\n"
            f"parser = Parser.from_db({str(trained_db)!r}, theta={THETA}, beam=2)\n"
            "parser.parse_tagged([('The', 'DT'), ('dog', 'NN'), ('barked', 'VBD')])\n"
            "print('scipy.linalg' in sys.modules)\n"
            "import numpy as np, numba, scipy.linalg\n"
            "dot = numba.njit(lambda a, b: np.dot(a, b))\n"
            "print(dot(np.ones(3), np.arange(3.0)), scipy.linalg.norm(np.ones(4)))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "3.0", "2.0"]


def test_trees_as_the_per_label_reader_reads_them(trained_db: Path) -> None:
    model = load_model(trained_db, THETA)
    models = Models(Database(trained_db, readonly=True))
    assert model.ensembles
    for label, ensemble in model.ensembles.items():
        old = Forest.from_trees(models.trees(label, ensemble.trees) if ensemble.trees else [])
        for name in ("roots", "feature", "true_child", "false_child", "value"):
            assert np.array_equal(getattr(old, name), getattr(ensemble.forest, name)), (label, name)


def test_feature_ids_read_when_first_used(trained_db: Path) -> None:
    model = load_model(trained_db, THETA)
    everything = Runs(Database(trained_db, readonly=True)).feature_ids()
    tested = features_tested(model.ensembles)
    assert model.tested_ids == {key: i for key, i in everything.items() if i in tested}
    assert len(model.feature_ids) == len(everything) and dict(model.feature_ids.items()) == everything
    assert model.for_scoring() is model.for_scoring()
    assert model.for_scoring().feature_ids == model.tested_ids


@pytest.mark.parametrize("beam", [1, 50])
def test_parses_as_with_every_stored_feature(trained_db: Path, beam: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring over the tested features only gives the same trees, pops and all, as over every feature."""
    fast = Parser.from_db(trained_db, theta=THETA, beam=beam)
    full = Parser.from_db(trained_db, theta=THETA, beam=beam)
    monkeypatch.setattr(full.model, "for_scoring", lambda: full.model)
    dev = [tagged_words(tree) for tree in Runs(Database(trained_db, readonly=True)).gold_trees("dev")][:40]
    for tagged in dev:
        a, b = fast.parse_tagged(tagged), full.parse_tagged(tagged)
        assert (str(a), a.pops, a.fallback, a.completion) == (str(b), b.pops, b.fallback, b.completion)
    assert len(full.model.feature_ids) > len(fast.model.for_scoring().feature_ids)


def test_damaged_tree_refused_naming_it(db_copy: Path) -> None:
    model = load_model(db_copy, THETA)
    label = next(name for name, e in model.ensembles.items() if e.trees)
    connection = apsw.Connection(str(db_copy))
    try:
        connection.execute("UPDATE tree_nodes SET depth = depth + 7 WHERE iteration = 1 AND node = 0 "
                           "AND label_id = (SELECT id FROM labels WHERE name = ?)", (label,))
    finally:
        connection.close()
    with pytest.raises(DatabaseError, match=f"iteration 1 of {label} fails its checksum"):
        load_model(db_copy, THETA)


# The damage check runs on a thread of its own while the parser loads; nothing parses before it passes.


@pytest.mark.parametrize("table", ["calibration_points", "tree_nodes"])
def test_open_parser_refuses_damage_found_while_it_loads(db_copy: Path, table: str) -> None:
    """``calibration_points`` a parse at a given Θ̂ does not read (only the check finds it); ``tree_nodes``
    the load reads first: either way the one damage line, not what the load tripped over. (Damage only
    training reads: tests/test_parse_damage_check.py.)"""
    from clparse import api
    from tests.conftest import damage

    damage(db_copy, table)
    with pytest.raises(DatabaseError, match="the database is damaged; nothing was written to it"):
        api.open_parser(db_copy, THETA)


def test_the_parse_command_refuses_a_damaged_database_before_any_tree(db_copy: Path) -> None:
    from tests.conftest import damage

    damage(db_copy, "calibration_points")
    done = subprocess.run([str(Path(sys.executable).parent / "clparse"), "parse", "--db", str(db_copy),
                           "--theta", str(THETA), "--input-format", "tagged"],
                          input="The/DT dog/NN barked/VBD\n", capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {db_copy}: the database is damaged; nothing was written to it; "
                           "restore it from a backup (`clparse backup` makes one) (quick_check: ")
    assert line.endswith(("(quick_check: details with --verbose)",  # shortened past 200 characters
                          "(quick_check: table calibration_points: database disk image is malformed)"))


def test_open_parser_leaves_no_thread_behind(trained_db: Path) -> None:
    # `parse --jobs N` forks only when no other thread runs
    import threading

    from clparse import api

    api.open_parser(trained_db, THETA)
    assert [t.name for t in threading.enumerate() if t.name.startswith("clparse")] == []


def test_the_damage_check_runs_while_the_parser_loads(trained_db: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The check waits until the load has begun: run one after the other, it would wait in vain."""
    import threading

    from clparse import api
    from clparse.store import database

    loading, seen = threading.Event(), []
    load = api._open_parser

    def check(path: object, pragma: str = "quick_check", tables: object = None) -> None:
        seen.append(loading.wait(timeout=30))

    def open_loading(*args: object, **kwargs: object) -> object:
        loading.set()
        return load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(database, "quick_check", check)
    monkeypatch.setattr(api, "_open_parser", open_loading)
    api.open_parser(trained_db, THETA)
    assert seen == [True]


# A cached kernel of clparse loads without numba's compiler registries (clparse.features.numba_start).


def test_a_cached_kernel_loads_without_numba_registries(trained_db: Path) -> None:
    """In a fresh process (the kernels cached on disk by now): the same tree as this process gives, and
    none of the registries' modules imported (numba.np.arraymath is the first thing a refresh imports)."""
    sentence = [("The", "DT"), ("dog", "NN"), ("barked", "VBD"), ("at", "IN"), ("the", "DT"), ("cat", "NN")]
    expected = str(Parser.from_db(trained_db, theta=THETA, beam=10).parse_tagged(sentence))
    code = ("import sys\nfrom clparse.parser import Parser\n"
            f"parser = Parser.from_db({str(trained_db)!r}, theta={THETA}, beam=10)\n"
            f"print(parser.parse_tagged({sentence!r}))\n"
            "print('numba.np.arraymath' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == [expected, "False"]


def test_functions_outside_clparse_load_as_numba_loads_them(tmp_path: Path) -> None:
    """A caller's own cached function, in a process that imported the parser: numba's own load (which
    refreshes its registries), not clparse's lean one."""
    (tmp_path / "users_module.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n", encoding="utf-8")
    code = ("import sys\nimport clparse.parser\nimport users_module\n"
            "print(users_module.twice(21), 'numba.np.arraymath' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    first = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    again = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    assert first.stdout.split() == again.stdout.split() == ["42", "True"]
    assert list((tmp_path / "__pycache__").glob("users_module.twice-*.nbc"))  # the second run loaded it


class _CacheStandIn:
    """What the lean load reads of numba's per-function cache, for a function named by ``module``."""

    def __init__(self, module: str | None, error: OSError | None = None) -> None:
        def function() -> None: ...

        function.__module__ = module  # type: ignore[assignment]
        self._py_func = function
        self.error = error
        self.loads = 0

    @contextlib.contextmanager
    def _guard_against_spurious_io_errors(self) -> Iterator[None]:
        try:  # numba's guard on Windows: a cache file another process holds is not an error
            yield
        except OSError as exc:
            if exc.errno != errno.EACCES:
                raise

    def _load_overload(self, sig: object, target_context: object) -> object:
        self.loads += 1
        if self.error is not None:
            raise self.error
        return None


def test_a_cache_file_in_use_is_a_miss_not_an_error() -> None:
    # the guard swallows the error: numba then compiles, so the lean load must answer "not loaded"
    from numba.core import caching
    from numba.core.registry import cpu_target

    cache = _CacheStandIn("clparse.features.kernel", OSError(errno.EACCES, "in use by another process"))
    assert caching.Cache.load_overload(cache, (), cpu_target.target_context) is None
    assert cache.loads == 1


def test_a_function_without_a_module_name_loads_numbas_way() -> None:
    # code exec'd with globals lacking __name__ gives functions whose __module__ is None
    from numba.core import caching
    from numba.core.registry import cpu_target

    cache = _CacheStandIn(None)
    assert caching.Cache.load_overload(cache, (), cpu_target.target_context) is None
    assert cache.loads == 1


def test_the_console_script_freezes_what_is_alive_before_shutdown() -> None:
    # clparse.cli.run (the installed `clparse`) freezes the collector after the command, so that shutdown
    # does not walk every object the kernels left; atexit handlers still run after it.
    from importlib.metadata import entry_points

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts["clparse"] == "clparse.cli:run"
    code = ("import atexit, gc, sys\nfrom clparse.cli import run\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            "sys.argv = ['clparse', '--version']\nrun()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "clparse" in done.stdout and done.stdout.rstrip().endswith("frozen True")


# A lean load leaves the cached bitcode unparsed and lists the defined symbols from the object code.


def _cached_libraries() -> Iterator[tuple[str, bytes, bytes]]:
    """(name, object code, bitcode) of every clparse kernel in numba's disk cache, as the cache holds it."""
    from numba.core.registry import CPUDispatcher

    from clparse.features import kernel

    def find(value: object) -> tuple[str, str, tuple[bytes, bytes]] | None:
        if isinstance(value, tuple) and len(value) == 3 and value[1] == "object":
            return value  # type: ignore[return-value]
        for part in value if isinstance(value, (tuple, list)) else ():
            found = find(part)
            if found is not None:
                return found
        return None

    kernel.row_capacity(5, 10)  # at least one kernel cached
    for value in vars(kernel).values():
        if isinstance(value, CPUDispatcher) and value._cache is not None:
            cache_file = value._cache._cache_file
            for key in cache_file._load_index():
                state = find(cache_file.load(key))
                if state is not None:
                    yield state[0], *state[2]


def test_object_symbols_are_the_bitcodes_defined_names() -> None:
    """For every clparse kernel in numba's disk cache: the ELF object's defined symbols are the names
    numba lists from the bitcode (functions and variables that are not declarations)."""
    from llvmlite import binding

    from clparse.features.object_symbols import defined_symbols

    compared = 0
    for name, object_code, bitcode in _cached_libraries():
        module = binding.parse_bitcode(bitcode)
        expected = {symbol.name for symbols in (module.functions, module.global_variables)
                    for symbol in symbols if not symbol.is_declaration}
        assert defined_symbols(object_code) == expected, name
        compared += 1
    assert compared >= 1


@pytest.mark.parametrize("data", [b"", b"not an object file", b"\x7fELF\x01\x01" + bytes(60),
                                  b"\x7fELF\x02\x02" + bytes(60)])
def test_anything_but_a_64_bit_little_endian_elf_object_is_numbas_to_load(data: bytes) -> None:
    from clparse.features.object_symbols import defined_symbols

    assert defined_symbols(data) is None


def test_a_truncated_object_is_numbas_to_load() -> None:
    from clparse.features.object_symbols import defined_symbols

    _, object_code, _ = next(_cached_libraries())
    assert defined_symbols(object_code[: len(object_code) // 2]) is None


def test_a_lean_loaded_kernel_links_into_a_new_compilation(trained_db: Path) -> None:
    """In a fresh process (the kernels cached on disk by now): the parse loads the kernels without
    parsing their bitcode, gives this process's tree, and a function compiled afterwards that calls a
    loaded kernel links it in (its bitcode parsed then) and computes what the kernel computes."""
    sentence = [("The", "DT"), ("dog", "NN"), ("barked", "VBD"), ("at", "IN"), ("the", "DT"), ("cat", "NN")]
    expected = str(Parser.from_db(trained_db, theta=THETA, beam=10).parse_tagged(sentence))
    code = ("import numba\nfrom clparse.parser import Parser\nfrom clparse.features import kernel\n"
            f"parser = Parser.from_db({str(trained_db)!r}, theta={THETA}, beam=10)\n"
            f"print(parser.parse_tagged({sentence!r}))\n"
            "library = next(iter(kernel._best_first_steps.overloads.values())).library\n"
            "print(library._shared_module is None, '_clparse_bitcode' in vars(library))\n"
            "@numba.njit\n"
            "def rows(k, n):\n    return kernel._row_capacity(k, n) + 1\n"
            "print(rows(5, 10) == kernel.row_capacity(5, 10) + 1)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == [expected, "True True", "True"]


def test_numba_is_imported_without_its_scipy_version_check() -> None:
    code = ("import sys\nimport clparse.parser\nprint('scipy' in sys.modules)\n"
            "import scipy\nprint(scipy.__name__)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "scipy"]


def _with_section_kind(data: bytes, old: int, new: int) -> bytes:
    """``data`` (an ELF object) with every section of type ``old`` retyped ``new``."""
    import struct

    out = bytearray(data)
    (offset,) = struct.unpack_from("<Q", data, 0x28)
    size, count = struct.unpack_from("<HH", data, 0x3A)
    for i in range(count):
        if struct.unpack_from("<I", data, offset + i * size + 4)[0] == old:
            struct.pack_into("<I", out, offset + i * size + 4, new)
    return bytes(out)


def test_an_object_that_would_list_no_symbol_is_numbas_to_load() -> None:
    """No symbol table, extended section numbering (e_shnum 0), or a symbol table whose strings are not a
    string table: None, never an empty list (numba would build the kernel from a null entry point)."""
    import struct

    from clparse.features.object_symbols import defined_symbols

    _, object_code, _ = next(_cached_libraries())
    assert defined_symbols(object_code)
    assert defined_symbols(_with_section_kind(object_code, 2, 0)) is None  # SHT_SYMTAB gone
    assert defined_symbols(_with_section_kind(object_code, 3, 1)) is None  # SHT_STRTAB now PROGBITS
    extended = bytearray(object_code)
    struct.pack_into("<H", extended, 0x3C, 0)  # e_shnum 0: the count would be in section 0's header
    assert defined_symbols(bytes(extended)) is None
