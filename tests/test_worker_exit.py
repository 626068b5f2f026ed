"""How a worker's end is put in words (clparse.worker_exit). tests/test_train.py and tests/test_parse_jobs.py
see the words in `train --jobs` and `parse --jobs` when a worker is SIGKILLed."""

from __future__ import annotations

import signal

from clparse.worker_exit import SIGKILL_HINT, worker_exit


def test_sigkill_names_its_usual_cause() -> None:
    assert worker_exit(-signal.SIGKILL) == f"killed by SIGKILL (signal {int(signal.SIGKILL)}), {SIGKILL_HINT}"
    assert "out-of-memory" in SIGKILL_HINT and "--jobs" in SIGKILL_HINT


def test_other_signals_by_name_and_number() -> None:
    assert worker_exit(-signal.SIGTERM) == f"killed by SIGTERM (signal {int(signal.SIGTERM)})"
    assert worker_exit(-signal.SIGSEGV) == f"killed by SIGSEGV (signal {int(signal.SIGSEGV)})"


def test_a_signal_without_a_name_keeps_its_number() -> None:
    assert worker_exit(-200) == "killed by signal 200"


def test_exit_status_and_no_answer() -> None:
    assert worker_exit(0) == "exited with status 0"
    assert worker_exit(3) == "exited with status 3"
    assert worker_exit(None) == "stopped answering"
