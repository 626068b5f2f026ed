"""Faults a user met in `clparse train` (session 12, helper D): each test failed before its fix."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import invoke_cli


def test_a_label_in_another_case_is_named_as_the_near_miss(prepared: Path) -> None:
    """`--labels np` listed the run's labels but did not say NP (difflib's ratio for np/NP is 0)."""
    result = invoke_cli(["train", "--db", prepared, "--labels", "np", "--max-iterations", "1"])
    assert result.exit_code == 2 and "no label np in this run; did you mean NP?" in result.stderr


def test_a_refused_setting_is_named_by_its_option_not_by_internal_keys(prepared: Path) -> None:
    """The refusal said "sample None (not 100), sample_stratified False (not True)" and, for --stumps,
    "--max-depth None (not 1)": internal names and values no user typed."""
    started = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "1"])
    assert started.exit_code == 0, started.stderr
    sampled = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "2",
                          "--sample", "50"])
    assert sampled.exit_code == 1
    assert "was started with no --sample (not --sample 50);" in sampled.stderr
    assert "stratified" not in sampled.stderr and "None" not in sampled.stderr
    stumps = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "2", "--stumps"])
    assert stumps.exit_code == 1 and "was started with no --max-depth (not --max-depth 1);" in stumps.stderr
    rule = invoke_cli(["train", "--db", prepared, "--labels", "NP", "--max-iterations", "2", "--rule", "l1"])
    assert rule.exit_code == 1 and "--rule mrl (not l1), --smoothing 0.5 (not 0.0);" in rule.stderr


def _private_tmpfs_works(directory: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                            str(directory)], capture_output=True, timeout=30)
    return probe.returncode == 0


def test_a_full_disk_stops_parallel_training_in_one_line(prepared: Path, tmp_path: Path) -> None:
    """As root, on a real full disk (a tmpfs a little larger than the run, in a private mount namespace):
    `--jobs 2` started every remaining label in turn, each failing, one warning per label (12 on the
    sample); `--jobs 1` stopped at the first with one error line, as every job count now does."""
    small = tmp_path / "small"
    small.mkdir()
    if not _private_tmpfs_works(small):
        pytest.skip("needs root and unshare -m (a private tmpfs)")
    size = prepared.stat().st_size // 1024 + 600
    script = (f"mount -t tmpfs -o size={size}k tmpfs {shlex.quote(str(small))} && "
              f"cp {shlex.quote(str(prepared))} {shlex.quote(str(small / 'x.sqlite'))} && exec \"$@\"")
    clparse = str(Path(sys.executable).parent / "clparse")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", clparse,
                             "train", "--db", str(small / "x.sqlite"), "--jobs", "2"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert not [line for line in lines if line.startswith("warning: label")], result.stderr
    assert [line for line in lines if line.startswith("Error:")] == [
        f"Error: {small / 'x.sqlite'}: the disk is full; the transaction in flight was rolled back, "
        "everything committed before is intact; free space and run the command again"]

