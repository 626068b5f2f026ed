"""When a label's boosting stops: a Θ floor, an iteration cap or a split cap (whichever comes first).

With none given, training stops at the default Θ floor, 1e-6 × the mean number of candidate
examples per label: Θ scales with the summed weights, which scale with the number of examples.
On GUM (about 1 M candidates per label) that is Θ = 1.0, below the paper's best Θ̂ = 1.42 on a
WSJ set of similar size, so calibration finds every label trained past the Θ̂ values it tries.
"""

from __future__ import annotations

from dataclasses import dataclass

from clparse.errors import ParameterError

DEFAULT_FLOOR_PER_CANDIDATE = 1e-6


@dataclass(frozen=True)
class StopRule:
    until_theta: float | None = None  # stop once Θ^t < this (the label is then trained past it)
    max_iterations: int | None = None  # stop at this many trees in all
    max_splits: int | None = None  # stop once the trees hold this many splits in all

    def __post_init__(self) -> None:
        if self.until_theta is not None and not self.until_theta > 0:
            raise ParameterError("until_theta", f"must be positive, got {self.until_theta:g}")
        for name in ("max_iterations", "max_splits"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ParameterError(name, f"must be at least 1, got {value}")

    @property
    def empty(self) -> bool:
        return self.until_theta is None and self.max_iterations is None and self.max_splits is None

    def reached(self, iteration: int, theta: float, splits: int) -> str | None:
        """Why training should stop now, or None."""
        if self.until_theta is not None and theta < self.until_theta:
            return f"Θ = {theta:.6g} fell below the stop at Θ {self.until_theta:g}"
        if self.max_iterations is not None and iteration >= self.max_iterations:
            return (f"reached {self.max_iterations} iterations" if iteration == self.max_iterations
                    else f"already {iteration} iterations, past the stop at {self.max_iterations}")
        if self.max_splits is not None and splits >= self.max_splits:
            return f"reached {self.max_splits} splits ({splits})"
        return None

    def describe(self) -> str:
        parts = []
        if self.until_theta is not None:
            parts.append(f"until Θ < {self.until_theta:g}")
        if self.max_iterations is not None:
            parts.append(f"at most {self.max_iterations} iterations")
        if self.max_splits is not None:
            parts.append(f"at most {self.max_splits} splits")
        return ", ".join(parts) or "no limit"


def default_theta_floor(mean_candidates: float) -> float:
    """1e-6 × the mean number of candidate examples per label (see the module docstring)."""
    return DEFAULT_FLOOR_PER_CANDIDATE * mean_candidates
