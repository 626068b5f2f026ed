"""Calibration (paper §2.1.3): parse the dev set at each candidate Θ̂, keep the scores, pick the best."""
