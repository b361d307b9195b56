"""Property (d): the crash-prone fuzz cases (`crash_prone.py`) run as one batch in a subprocess,
so that an interpreter crash (an abort in XLA, a segfault in the runtime) is a failed test here
instead of the end of the test run."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_crash_prone_cases_in_a_subprocess():
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        str(HERE / "crash_prone.py"),
    ]
    done = subprocess.run(
        command,
        cwd=HERE.parent.parent,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=600,
        check=False,
    )
    report = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, f"crash_prone.py exited with {done.returncode}:\n{report}"
