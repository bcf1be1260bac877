"""Fixtures of the cache tests: real groups with real members (root only)."""

from __future__ import annotations

import os
import subprocess

import pytest


@pytest.fixture
def unix_group(tmp_path):
    """Create real groups (and member users) for one test: `unix_group(members, primary=False)` -> gid; root only."""
    import grp
    import shutil
    import uuid

    if os.geteuid() != 0 or not (shutil.which("groupadd") and shutil.which("useradd")):
        pytest.skip("creating a group with members needs root and groupadd/useradd")
    made: list[tuple[str, str]] = []

    def make(members: int = 0, *, primary: bool = False) -> int:
        group = f"cct{uuid.uuid4().hex[:8]}"
        subprocess.run(["groupadd", group], check=True, capture_output=True)
        made.append(("groupdel", group))
        for _ in range(members):
            user = f"cct{uuid.uuid4().hex[:8]}"
            how = ["-g", group] if primary else ["-G", group]
            subprocess.run(
                ["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", *how, user], check=True, capture_output=True
            )
            made.append(("userdel", user))
        return grp.getgrnam(group).gr_gid

    yield make
    for tool, name in reversed(made):
        subprocess.run([tool, name], check=False, capture_output=True)
