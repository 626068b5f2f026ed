"""Example weights and training loss for the two losses the paper names.

* logistic (the paper, Eq. 6 and 8): L(z) = ln(1 + e^-z), w = m / (1 + e^(yQ));
* exponential (confidence-rated AdaBoost, footnote 2): L(z) = e^-z, w = m e^(-yQ).

``m`` is an example's multiplicity (identical deduplicated examples share a margin, so a weight
times m is exactly the sum of their weights).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from clparse.boost.kernels import ordered_dot

LOSSES = ("logistic", "exponential")


def example_weights(loss: str, y: np.ndarray, multiplicity: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """w_i = m_i / (1 + exp(y_i Q_i)) (logistic) or m_i exp(-y_i Q_i) (exponential), as float64."""
    z = y.astype(np.float64) * margins
    if loss == "logistic":
        return multiplicity * expit(-z)  # expit(-z) = 1 / (1 + e^z) without overflow
    if loss == "exponential":
        return multiplicity * np.exp(-z)
    raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")


def total_loss(loss: str, y: np.ndarray, multiplicity: np.ndarray, margins: np.ndarray) -> float:
    """Σ m_i L(y_i Q_i)."""
    z = y.astype(np.float64) * margins
    if loss == "logistic":
        return ordered_dot(multiplicity, np.logaddexp(0.0, -z))
    if loss == "exponential":
        return ordered_dot(multiplicity, np.exp(-z))
    raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")
