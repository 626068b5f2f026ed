"""How ``parse --jobs`` deals the input into chunks (:class:`clparse.parse_jobs.Lookahead`): every sentence
once and in order, chunks of 1, 2, 4, ... sentences first (the first trees after one sentence's parse),
then full chunks while the input lasts, shrinking ones once it has ended, and the input's
own error kept for after the sentences read before it; and the parent's loop sends without waiting when
nothing is in flight."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clparse.parse_jobs import Lookahead


def _input(n: int, fail_after: int | None = None) -> Iterator[tuple[list[str], int]]:
    for i in range(n):
        if fail_after is not None and i == fail_after:
            raise ValueError(f"line {i + 1}: bad")
        yield [f"w{i}"], i


def _deal(ahead: Lookahead) -> list[tuple[list[Any], list[Any], bool]]:
    """Every chunk taken: (sentences, extras, whether the input had ended when it was taken)."""
    chunks = []
    while not ahead.exhausted:
        sentences, extras = ahead.take()
        if not sentences:
            break
        chunks.append((sentences, extras, ahead.ended))
    return chunks


@given(n=st.integers(0, 400), chunk=st.integers(1, 40), jobs=st.integers(1, 4))
def test_every_sentence_once_in_order(n: int, chunk: int, jobs: int) -> None:
    chunks = _deal(Lookahead(_input(n), chunk, jobs))
    assert [e for _, extras, _ in chunks for e in extras] == list(range(n))
    assert [s for sentences, _, _ in chunks for s in sentences] == [[f"w{i}"] for i in range(n)]
    assert all(1 <= len(extras) <= chunk for _, extras, _ in chunks)


@given(n=st.integers(0, 400), chunk=st.integers(1, 40), jobs=st.integers(1, 4))
def test_ramped_then_full_chunks_until_the_input_ends_then_shrinking(n: int, chunk: int, jobs: int) -> None:
    chunks = _deal(Lookahead(_input(n), chunk, jobs))
    sizes = [len(extras) for _, extras, _ in chunks]
    ended = [was_ended for _, _, was_ended in chunks]
    assert all(size == min(chunk, 2 ** i) for i, (size, was) in enumerate(zip(sizes, ended)) if not was)
    tail = [size for size, was in zip(sizes, ended) if was]
    assert tail == sorted(tail, reverse=True)  # never larger than the chunk before it
    if tail:
        assert tail[-1] == 1  # down to single sentences at the very end


def test_the_last_chunks_shrink_worked_example() -> None:
    # 100 sentences, chunks of 32, two workers: chunks of 1, 2, 4, 8 (each taken with 3 × its size read
    # ahead), then 16 with 48 read ahead, by which time the input has ended; the 69 left are dealt in
    # ceil(left / 4) pieces, at most the ramp's next size (32).
    chunks = _deal(Lookahead(_input(100), 32, 2))
    assert [len(extras) for _, extras, _ in chunks] == [1, 2, 4, 8, 16, 18, 13, 10, 7, 6, 4, 3, 2, 2, 1, 1,
                                                        1, 1]


def test_the_inputs_error_is_kept_after_what_came_before_it() -> None:
    ahead = Lookahead(_input(50, fail_after=37), 8, 2)
    chunks = _deal(ahead)
    assert [e for _, extras, _ in chunks for e in extras] == list(range(37))
    assert isinstance(ahead.failure, ValueError) and str(ahead.failure) == "line 38: bad"


def test_reads_no_further_ahead_than_it_says() -> None:
    read: list[int] = []

    def counted() -> Iterator[tuple[list[str], int]]:
        for sentence, i in _input(1000):
            read.append(i)
            yield sentence, i

    ahead = Lookahead(counted(), 10, 3)
    taken = 0
    for size in (1, 2, 4, 8, 10, 10):
        sentences, _ = ahead.take()
        assert len(sentences) == size
        assert len(read) == taken + size * (3 + 1)  # the chunk's size × (jobs + 1), the chunk included
        taken += size


# The parent's loop (clparse.parse_jobs.parse_parallel) with a stand-in parser: when everything sent has
# come back and been handed on while the window was full, it must send more at once, not wait on workers
# that hold nothing (it waited 5 s there, found by review: the shrinking tail made it reachable).


@dataclass
class _Options:
    beam: int = 1


class _Model:
    label_thetas = None
    theta = 3.0


class _StandInParser:
    source = "/nonexistent.sqlite"
    model = _Model()
    options = _Options()
    active_chooser = None  # no tag chooser for the workers

    def parse(self, sentence: list[str]) -> str:
        time.sleep(0.2 if sentence[0] == "slow" else 0.0)
        return sentence[0]


def test_the_parent_never_waits_on_workers_that_hold_no_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    import clparse.parse_jobs as jobs

    monkeypatch.setattr(jobs, "plain", lambda result: result)  # the stand-in's results are plain already
    monkeypatch.setattr(jobs, "rebuilt", lambda payload: payload)
    idle_waits: list[int] = []
    real_wait = jobs.wait

    def watched(objects: list[Any], timeout: float | None = None) -> list[Any]:
        if not any(isinstance(o, Connection) for o in objects):  # only the workers' sentinels
            idle_waits.append(len(objects))
        ready = real_wait(objects, timeout)
        time.sleep(0.02)  # a parent slow to wake: a worker's next results arrive with the ones that woke it
        return ready

    monkeypatch.setattr(jobs, "wait", watched)
    # sentence 280 of 300 is slow: the other worker empties the window meanwhile (the reviewer's case)
    data = [(["slow" if i == 280 else f"w{i}"], i) for i in range(300)]
    out = list(jobs.parse_parallel(_StandInParser(), iter(data), 2, chunk=32, start="fork"))
    assert [extra for _, extra in out] == list(range(300))
    assert idle_waits == []
