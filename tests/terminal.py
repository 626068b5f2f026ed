"""Running a command with its stderr on a pseudo-terminal, as a person at a terminal would see it."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path


def run_on_terminal(command: list[str], stdin: str, env: dict[str, str], cwd: Path | None = None,
                    timeout: float = 300) -> tuple[int, str, str]:
    """Run ``command`` with stderr on a pseudo-terminal: (status, stdout, what the terminal showed)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave, env=env,
                               cwd=cwd, text=True)
    os.close(slave)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(stdin)
    process.stdin.close()
    shown = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    os.close(master)
    out = process.stdout.read()
    return process.wait(timeout=60), out, shown.decode("utf-8", "replace")
