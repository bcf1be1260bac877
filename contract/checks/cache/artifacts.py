"""The `[cache] artifacts` file as the engine would load it (CC211-CC213; CC707 for a file torch cannot use).

The file holds compiled code. Before a byte is read, it and its directories must be the job's (`security`); the
bytes read from the checked, open file are hashed and compared with `artifacts_sha256`; the container is parsed in
pure Python (`container`). Only bytes that passed all three are handed to torch (`contract.checks.warm.artifacts`),
so `check`, `doctor` and `enforce` agree on what is loaded. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from contract.checks.cache.container import NotArtifacts, types
from contract.checks.cache.rules import ARTIFACTS_DIGEST, ARTIFACTS_INSECURE, ARTIFACTS_UNPINNED
from contract.checks.cache.security import Exposed, read_private
from contract.checks.context import CheckContext
from contract.document.load import Contract
from contract.findings import Finding

MAX_BYTES = 8 << 30
"""Artifacts larger than this are not read (a wrong path, not a cache)."""
EVIDENCE = "cache.artifacts"
"""The `CheckContext.evidence` key the inspection is kept under (the cache and warm checks share it)."""
WHAT = "[cache] artifacts"


@dataclass(frozen=True, kw_only=True)
class Inspection:
    """What the engine would load from `[cache] artifacts`, and why not."""

    path: Path | None = None
    """The file (resolved against the contract); None without `[cache] artifacts`."""
    present: bool = False
    """A regular file is there (through symlinks)."""
    trust: list[Finding] = field(default_factory=list)
    """CC211 (others could write it), CC212 (not the pinned file), CC213 (unpinned, `--strict` only)."""
    unusable: str | None = None
    """Why torch could not load it (a damaged or foreign file): reported as CC707, the start compiles cold."""
    sha256: str | None = None
    """Digest of the bytes read."""
    data: bytes | None = field(default=None, repr=False)
    """The verified bytes to hand to torch; None when anything above stops the load (or once they were loaded)."""

    @property
    def loadable(self) -> bool:
        """Enforce loads this file: it is there and passed every check."""
        return self.present and not self.trust and self.unusable is None


def inspect(contract: Contract, *, strict: bool = False, uid: int | None = None) -> Inspection:
    """Check, read, hash and parse the artifacts file, in that order, stopping at the first stage that fails."""
    spec = contract.cache
    if not spec.artifacts:
        return Inspection()
    path = as_written(contract, spec.artifacts)
    if not path.is_file():
        return Inspection(path=path)
    uid = os.geteuid() if uid is None else uid
    try:
        data = read_private(str(path), uid=uid, what=WHAT, limit=MAX_BYTES)
    except Exposed as exc:
        return Inspection(path=path, present=True, trust=[insecure(path, e) for e in exc.exposures])
    except (OSError, ValueError) as exc:
        why = f"cannot read it ({exc.strerror or exc})" if isinstance(exc, OSError) else str(exc)
        return Inspection(path=path, present=True, unusable=why)
    digest = hashlib.sha256(data).hexdigest()
    trust = _pin(path, spec.artifacts_sha256, digest, strict=strict)
    if trust:
        return Inspection(path=path, present=True, trust=trust, sha256=digest)
    try:
        types(data)
    except NotArtifacts as exc:
        return Inspection(path=path, present=True, unusable=str(exc), sha256=digest)
    return Inspection(path=path, present=True, sha256=digest, data=data)


def as_written(contract: Contract, value: str) -> Path:
    """The path, absolute but with its symlinks kept, so the link's own directory is checked too."""
    p = Path(value).expanduser()
    return Path(os.path.normpath(p if p.is_absolute() else contract.path.parent / p))


def of(ctx: CheckContext) -> Inspection:
    """The context's inspection, made once (the cache and warm checks both read it)."""
    if EVIDENCE not in ctx.evidence:
        ctx.evidence[EVIDENCE] = inspect(ctx.contract, strict=ctx.strict)
    return ctx.evidence[EVIDENCE]


def insecure(path: Path, exposure: tuple[str, str, str], what: str = WHAT) -> Finding:
    """CC211 at the path another user could write (the file itself or a directory above it); `what` names the file
    (the artifacts, or the kernel pack beside them: `contract.checks.warm.kernels`)."""
    where, why, fix = exposure
    if where == os.path.realpath(path):
        subject = f"{what} {path}" + ("" if where == str(path) else f" (a symlink to {where})") + f" {why}"
    else:
        subject = f"{where}, above {what} {path}: {why}"
    return ARTIFACTS_INSECURE.finding(where, f"{subject}; enforce will not load it", fix)


def _pin(path: Path, pin: str | None, digest: str, *, strict: bool) -> list[Finding]:
    """CC212 when the bytes are not the pinned ones; CC213 under `--strict` when nothing is pinned."""
    if pin is not None and pin != digest:
        return [
            ARTIFACTS_DIGEST.finding(
                "cache.artifacts_sha256",
                f"{WHAT} {path} has sha256 {digest}, the contract pins {pin}: enforce will not load it",
                "restore the artifacts shipped with this contract; if you rebuilt them yourself, pin them: "
                "`compile-contract warm CONTRACT --pin`",
            )
        ]
    if pin is None and strict:
        return [
            ARTIFACTS_UNPINNED.finding(
                "cache.artifacts",
                f"{WHAT} {path} is not pinned: enforce would load whatever file is there (now sha256 {digest})",
                f'check it is the file `compile-contract warm` saved, then set artifacts_sha256 = "{digest}" in '
                "[cache] (`compile-contract warm CONTRACT --pin` writes it)",
            )
        ]
    return []
