"""Who else could write what the engine runs: the cache dir (CC207) and the `[cache] artifacts` file (CC211).

Inductor loads compiled code from its cache dir, and `torch.compiler.load_cache_artifacts` unpickles (torch 2.13) or
plants for the next compile (every other version, 2.15 included) the code an artifacts file holds. So no directory on either path may be writable
by, or belong to, another user (checked through symlinks, group members included), and the artifacts file itself
must be a regular file of this user or root that nobody else can write. The rules follow OpenSSH's `safe_path` and
sudo's `sudo_secure_open`: check the path, then open it without following a last symlink and check the open file.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat

from contract.checks.cache.rules import INSECURE
from contract.findings import Finding

Exposure = tuple[str, str, str]
"""(the path another user could write or replace, why, the fix)."""


class Exposed(Exception):
    """The file was not read: someone else could have written it (`exposures` says who and where)."""

    def __init__(self, exposures: list[Exposure]) -> None:
        super().__init__(exposures[0][1])
        self.exposures = exposures


def insecure(path: str, uid: int | None = None) -> list[Finding]:
    """CC207 over the dir and its parents, as written and with symlinks resolved."""
    uid = os.geteuid() if uid is None else uid
    out = []
    for p in _prefixes(path):
        problem = _unsafe(p, is_dir=p in (path, os.path.realpath(path)), uid=uid)
        if problem:
            out.append(INSECURE.finding(p, problem[0], problem[1]))
    return out


def exposed_file(path: str, *, uid: int, what: str) -> list[Exposure]:
    """A file's exposures: the file it resolves to (owner, mode, kind) and every parent, as written and resolved
    (the link itself cannot be rewritten, only replaced through its parent, which is checked)."""
    real = os.path.realpath(path)
    out: list[Exposure] = []
    for p in _prefixes(path):
        if p == real:
            try:
                problem = _unsafe_file(os.stat(p), uid=uid, what=what)
            except OSError:
                continue
        elif p == os.path.normpath(path):
            continue
        else:
            problem = _unsafe(p, is_dir=False, uid=uid, what=what)
        if problem:
            out.append((p, *problem))
    return out


def read_private(path: str, *, uid: int, what: str, limit: int) -> bytes:
    """The file's bytes, read only when nobody but this user or root could have written them: the path is checked,
    then opened without following a last symlink and the open file checked again (a swap in between is refused).
    Raises Exposed, OSError, or ValueError when it is larger than `limit` bytes."""
    found = exposed_file(path, uid=uid, what=what)
    if found:
        raise Exposed(found)
    real = os.path.realpath(path)
    checked = os.stat(real)
    fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        problem = _unsafe_file(st, uid=uid, what=what)
        if problem is None and (st.st_dev, st.st_ino) != (checked.st_dev, checked.st_ino):
            problem = ("was replaced while it was being checked", f"find out who replaced {real}; ship {what} again")
        if problem:
            raise Exposed([(real, *problem)])
        if st.st_size > limit:
            raise ValueError(f"larger than {limit >> 30} GiB")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit >> 30} GiB")
    return data


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


def _unsafe(path: str, *, is_dir: bool, uid: int, what: str = "the cache dir") -> tuple[str, str] | None:
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
            f"chmod o-w {path} (or chmod +t), chown it to the job's user, or move {what}",
        )
    others = (
        group_others(st.st_gid, exclude={uid, st.st_uid}) if st.st_mode & stat.S_IWGRP and open_to_new_files else []
    )
    if others:
        return (
            f"writable by group {_group_name(st.st_gid)} (mode {mode:04o}){sticky}, whose members include "
            f"{_shown(others)}: they can plant code",
            f"chmod g-w {path} (or chmod +t), chgrp it to a group only the job's user is in, or move {what}",
        )
    if is_dir and st.st_uid != uid:
        return (
            f"owned by uid {st.st_uid}, not this process's uid {uid}: that user can plant code",
            f"chown {path} to the job's user, or move {what}",
        )
    if not is_dir and st.st_uid not in (uid, 0):
        return (
            f"parent owned by uid {st.st_uid}: that user can replace {what}",
            f"chown {path} to the job's user or root, or move {what}",
        )
    return None


def _unsafe_file(st: os.stat_result, *, uid: int, what: str) -> tuple[str, str] | None:
    """(why someone else could have written this file, the fix), or None: a regular file of this user or root,
    not writable by others or by a group with other members (netrc's and sudo's rule)."""
    mode = stat.S_IMODE(st.st_mode)
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file", f"point {what} at the regular file `compile-contract warm` saved"
    if st.st_mode & stat.S_IWOTH:
        return (
            f"is writable by every user (mode {mode:04o}): anyone can replace the compiled code it holds",
            "chmod go-w the file (and check it is the one `warm` saved: pin it with artifacts_sha256)",
        )
    others = group_others(st.st_gid, exclude={uid, st.st_uid}) if st.st_mode & stat.S_IWGRP else []
    if others:
        return (
            f"is writable by group {_group_name(st.st_gid)} (mode {mode:04o}), whose members include "
            f"{_shown(others)}: they can replace the compiled code it holds",
            "chmod g-w the file (and check it is the one `warm` saved: pin it with artifacts_sha256)",
        )
    if st.st_uid not in (uid, 0):
        return (
            f"is owned by uid {st.st_uid}, not this process's uid {uid} or root: that user can replace the compiled "
            "code it holds",
            f"chown the file to the job's user (after checking it is the one `warm` saved), or move {what}",
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


def _shown(names: list[str]) -> str:
    """The first few user names, for a message."""
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


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
