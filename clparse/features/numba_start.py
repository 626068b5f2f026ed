"""A faster first compiled call: clparse's cached kernels load without numba's compiler registries.

Loading a function from numba's disk cache, numba first "refreshes" its target context: it imports and
installs every typing and lowering registry it has (about 2,300 templates; arrays, math, random, typed
containers, cffi, jitclass...) and, with them, ``numba.np.arraymath``, which probes for BLAS by importing
``scipy.linalg``. That is 0.1 s of the first parsed sentence (0.2-0.4 s more with the probe), spent on
machinery only a *compilation* uses: a cached function is object code, and what it needs from the
process is the runtime (NRT) and the C helpers' symbols, not the registries.

:func:`lean_cache_loads` makes a cache hit of a clparse kernel initialise the runtime only (and register
the hash secret symbols typed dictionaries may refer to); a miss, where numba compiles next, refreshes
the context in full as numba does (the BLAS probe answered first without ``scipy.linalg``:
:func:`answer_blas_probe`), as does every compilation (numba's compiler refreshes the context itself).
Functions outside clparse load as numba loads them. The loaded object code is the same bytes either
way; the tests parse the sample through both paths and compare, and check which one ran.

One effect said plainly: the BLAS probe is now answered only when a clparse kernel misses the cache. A
process that imports the parser and then compiles something else first (a caller's jitted function, a
typed dictionary's method called from Python) lets numba probe as usual, importing ``scipy.linalg``
(0.2-0.4 s, beside the seconds the compilation takes); parsing with a warm cache compiles nothing.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from clparse.features.object_symbols import defined_symbols

_PROBED = "scipy.linalg"
_OWN = "clparse."


def import_numba() -> None:
    """Import numba without its SciPy version check (unless SciPy or numba is imported already).

    numba's ``__init__`` imports ``scipy`` only to refuse a SciPy older than 1.0 (0.01 s of the first
    parsed sentence); clparse requires a newer one, and nothing else numba imports with it reads SciPy.
    While the import runs, another thread's ``import scipy`` (or of a SciPy submodule) would fail, as in
    :func:`answer_blas_probe`; the parser imports numba before any thread of its own starts.
    """
    if "numba" in sys.modules or "scipy" in sys.modules:
        return
    sys.modules["scipy"] = None  # type: ignore[assignment]  # None in sys.modules: the import fails
    try:
        import numba  # noqa: F401
    finally:
        if "scipy" in sys.modules and sys.modules["scipy"] is None:  # not a module another thread imported
            del sys.modules["scipy"]


def answer_blas_probe() -> None:
    """Import numba's NumPy support without scipy.linalg (unless either is already imported).

    Process-wide, so said plainly: for the rest of the process numba believes there is no BLAS (a
    caller's own jitted ``np.convolve`` or ``np.correlate`` takes the slow loop; ``np.dot`` probes again
    when it compiles), and while the import runs, another thread's ``import scipy.linalg`` would fail.
    """
    if "numba.np.arraymath" in sys.modules or _PROBED in sys.modules:
        return
    sys.modules[_PROBED] = None  # type: ignore[assignment]  # None in sys.modules: the import fails
    try:
        import numba.np.arraymath  # noqa: F401  (runs the probe, once per process)
    finally:
        del sys.modules[_PROBED]


def lean_cache_loads() -> None:
    """Install, once per process, the lean cache load for clparse's own jitted functions."""
    from numba.core import caching

    if getattr(caching.Cache.load_overload, "clparse_lean", False):
        return
    needed = ("_load_overload", "_guard_against_spurious_io_errors")
    if not all(hasattr(caching.Cache, name) for name in needed):
        return  # a numba whose cache works otherwise: load as it loads
    numba_load = caching.Cache.load_overload

    def load_overload(cache: Any, sig: Any, target_context: Any) -> Any:
        # `or ""`: a function exec'd without a module name has __module__ None
        module = getattr(getattr(cache, "_py_func", None), "__module__", None) or ""
        if not module.startswith(_OWN):
            return numba_load(cache, sig, target_context)
        from numba.core.runtime import rtsys

        import numba.cpython.hashing  # noqa: F401  (registers the hash secret symbols at import)

        rtsys.initialize(target_context)
        loaded = None  # stays None where the guard swallows an error (Windows: a cache file in use)
        _LEAN.active = True
        try:
            with cache._guard_against_spurious_io_errors():
                loaded = cache._load_overload(sig, target_context)
        finally:
            _LEAN.active = False
        if loaded is None:  # not cached (or stale): numba compiles it next, with every registry
            answer_blas_probe()
            target_context.refresh()
        return loaded

    load_overload.clparse_lean = True  # type: ignore[attr-defined]
    caching.Cache.load_overload = load_overload  # type: ignore[method-assign]
    _defer_bitcode()


class _Lean(threading.local):
    active = False  # a lean load of a clparse kernel is under way in this thread


_LEAN = _Lean()


def _defer_bitcode() -> None:
    """Make a lean load leave the cached bitcode unparsed until a compilation links the function in.

    numba's ``_unserialize`` parses a cached function's bitcode (0.04 s for clparse's kernels) to list
    the symbols its object code defines, and keeps the parsed module for linking it into a later
    compilation. Under a lean load the list comes from the object's ELF symbol table
    (:func:`~clparse.features.object_symbols.defined_symbols`, the same names: a test compares them) and
    the bitcode is parsed only if a compilation asks for the module. Any other load, any other kind of
    library, or an object that is not 64-bit little-endian ELF goes numba's way.
    """
    from numba.core import codegen

    library_class = codegen.CPUCodeLibrary
    needed = ("_unserialize", "_get_module_for_linking", "_set_compiled_object", "enable_object_caching",
              "_finalize_final_module")
    if getattr(library_class._unserialize, "clparse_lean", False) or not all(
            hasattr(library_class, name) for name in needed):
        return
    numba_unserialize = library_class._unserialize.__func__  # type: ignore[attr-defined]
    numba_linking = library_class._get_module_for_linking

    def unserialize(cls: Any, generator: Any, state: Any) -> Any:
        name, kind, data = state
        engine: Any = getattr(generator, "_engine", None)
        if not _LEAN.active or kind != "object" or not hasattr(engine, "_defined_symbols"):
            return numba_unserialize(cls, generator, state)
        object_code, bitcode = data
        defined = defined_symbols(object_code)
        if defined is None:
            return numba_unserialize(cls, generator, state)
        library = generator.create_library(name)
        library.enable_object_caching()
        library._set_compiled_object(object_code)
        library._clparse_bitcode = bitcode
        library._finalize_final_module()
        engine._defined_symbols |= defined
        return library

    def module_for_linking(library: Any) -> Any:
        bitcode = library.__dict__.get("_clparse_bitcode")
        if bitcode is not None and library._shared_module is None:
            from llvmlite import binding

            library._shared_module = binding.parse_bitcode(bitcode)  # kept for a retry if this raises
        library.__dict__.pop("_clparse_bitcode", None)
        return numba_linking(library)

    unserialize.clparse_lean = True  # type: ignore[attr-defined]
    library_class._unserialize = classmethod(unserialize)  # type: ignore[assignment,method-assign]
    library_class._get_module_for_linking = module_for_linking  # type: ignore[method-assign]
