"""CC207: Inductor loads compiled code from its cache dir, so no directory on the path may be writable by, or belong
to, another user (checked through symlinks, group members included)."""

from __future__ import annotations

import grp
import os
import pwd
import stat

from contract.checks.cache.rules import INSECURE
from contract.findings import Finding


def insecure(path: str, uid: int | None = None) -> list[Finding]:
    """CC207 over the dir and its parents, as written and with symlinks resolved."""
    uid = os.geteuid() if uid is None else uid
    out = []
    for p in _prefixes(path):
        problem = _unsafe(p, is_dir=p in (path, os.path.realpath(path)), uid=uid)
        if problem:
            out.append(INSECURE.finding(p, problem[0], problem[1]))
    return out


def _prefixes(path: str) -> list[str]:
    """Existing ancestors of the path as written and of its real path, deduplicated, nearest last."""
    seen: list[str] = []
    for base in (os.path.normpath(path), os.path.realpath(path)):
        p = base
        chain = []
        while True:
            if os.path.exists(p):
                chain.append(p)
            if os.path.dirname(p) == p:
                break
            p = os.path.dirname(p)
        seen += [c for c in reversed(chain) if c not in seen]
    return seen


def _unsafe(path: str, *, is_dir: bool, uid: int) -> tuple[str, str] | None:
    """(why someone else could write or replace this dir, the fix), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    open_to_new_files = is_dir or not st.st_mode & stat.S_ISVTX
    sticky = "" if not st.st_mode & stat.S_ISVTX else " (the sticky bit does not stop new files)"
    if st.st_mode & stat.S_IWOTH and open_to_new_files:
        return (
            f"writable by every user (mode {mode:04o}){sticky}: others can plant code",
            f"chmod o-w {path} (or chmod +t), chown it to the job's user, or move the cache dir",
        )
    others = (
        group_others(st.st_gid, exclude={uid, st.st_uid}) if st.st_mode & stat.S_IWGRP and open_to_new_files else []
    )
    if others:
        shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        return (
            f"writable by group {_group_name(st.st_gid)} (mode {mode:04o}){sticky}, whose members include "
            f"{shown}: they can plant code",
            f"chmod g-w {path} (or chmod +t), chgrp it to a group only the job's user is in, or move the cache dir",
        )
    if is_dir and st.st_uid != uid:
        return (
            f"owned by uid {st.st_uid}, not this process's uid {uid}: that user can plant code",
            f"chown {path} to the job's user, or move the cache dir",
        )
    if not is_dir and st.st_uid not in (uid, 0):
        return (
            f"parent owned by uid {st.st_uid}: that user can replace the cache dir",
            f"chown {path} to the job's user or root, or move the cache dir",
        )
    return None


def group_others(gid: int, *, exclude: set[int]) -> list[str]:
    """Users of group `gid` (listed members and users whose primary group it is), root and `exclude` left out.

    A user private group (only its owner) gives none: group-writable is then as private as owner-writable.
    """
    try:
        names = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        names = set()
    names |= {pw.pw_name for pw in pwd.getpwall() if pw.pw_gid == gid}
    return sorted(name for name in names if _uid_of(name) not in exclude | {0})


def _uid_of(name: str) -> int:
    """A user's uid (0, i.e. left out, for a listed member that is not a user: it cannot log in)."""
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return 0


def _group_name(gid: int) -> str:
    """`name (gid N)` for messages, the bare gid when the group database has no entry."""
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"
