"""The read-only walls hold however the course was installed (issue 21: a wall test failed
on a fresh clone in a clean environment)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from minitorch.course.grading import confine

SCRIPT = textwrap.dedent(
    """
    import os, sys, tempfile
    from minitorch.course.grading import confine
    if confine.unshare_namespaces(pid=False) != "root":
        sys.exit(77)
    confine._mount("none", "/", None, confine.MS_REC | confine.MS_PRIVATE, None)
    root = tempfile.mkdtemp(prefix="minitorch-closed-")  # 0700: closed to other users
    course = os.path.join(root, "course")
    venv = os.path.join(course, ".venv")
    os.makedirs(venv)
    stash = tempfile.mkdtemp(prefix="minitorch-stash-")
    confine.expose([venv], stash)  # the closed folder becomes a tmpfs; venv is bound back
    confine.read_only([course, venv])
    print(confine.still_writable([course, venv]))
    """
)


@pytest.mark.skipif(not confine.linux() or os.geteuid() != 0, reason="needs root on Linux")
def test_folders_exposed_from_a_closed_folder_are_read_only_too():
    # catches: a remount that made only the top mount read-only, leaving the venv that
    # expose() bound back (a course cloned into a 0700 temporary folder) writable
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    if done.returncode == 77:
        pytest.skip("no mount namespaces here")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
