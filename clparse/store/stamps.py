"""Timestamps as every table stores them (UTC, ISO 8601, seconds): one place, importable by readers
and writers alike without pulling in the trainer."""

from __future__ import annotations

from datetime import datetime, timezone


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
