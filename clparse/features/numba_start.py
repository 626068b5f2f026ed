"""A faster first compiled call: numba's BLAS probe answered without importing scipy.linalg.

The first time a process compiles or loads a numba function, numba imports its NumPy support, which
probes for BLAS by importing ``scipy.linalg`` (scipy is installed for ``combine``): 0.2-0.4 s of the
first parsed sentence, for nothing, as no kernel of clparse calls BLAS (no ``np.dot``, no ``linalg``).
:func:`answer_blas_probe` imports that support while ``scipy.linalg`` cannot be imported, so the probe
answers "no BLAS" (numba then uses its own loops for the few functions that would have called BLAS;
a later ``np.dot`` in a jitted function still compiles, and ``import scipy.linalg`` works as always).
Process-wide, so said plainly: for the rest of the process numba believes there is no BLAS (a caller's
own jitted ``np.convolve`` or ``np.correlate`` takes the slow loop; ``np.dot`` probes again when it
compiles), and while the import runs, another thread's ``import scipy.linalg`` would fail.
"""

from __future__ import annotations

import sys

_PROBED = "scipy.linalg"


def answer_blas_probe() -> None:
    """Import numba's NumPy support without scipy.linalg (unless either is already imported)."""
    if "numba.np.arraymath" in sys.modules or _PROBED in sys.modules:
        return
    sys.modules[_PROBED] = None  # type: ignore[assignment]  # None in sys.modules: the import fails
    try:
        import numba.np.arraymath  # noqa: F401  (runs the probe, once per process)
    finally:
        del sys.modules[_PROBED]
