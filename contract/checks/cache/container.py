"""Torch's portable cache-artifacts container, read in pure Python before torch sees a byte of it.

`torch.compiler.save_cache_artifacts()` writes (torch 2.11 and 2.13, `torch/utils/_appending_byte_serializer.py` and
`torch/compiler/_cache.py`): a big-endian CRC32 of everything after it (4 bytes), the encoding version (uint64, 1),
then per artifact type: its name (length-prefixed base64 of UTF-8), a count (uint64), and per artifact its key
(length-prefixed base64) and content (length-prefixed bytes: pickles, JSON for autotune). Torch checks only the CRC:
on a damaged or foreign file it logs a traceback on stderr; a length past the end makes its reader loop forever;
and a key with `..` (an autotune key is joined to the cache dir) writes outside the cache dir. So every length, name
and key is checked here, and a file that fails never reaches torch. Nothing here unpickles or imports torch.
"""

from __future__ import annotations

import base64
import binascii
import zlib

VERSION = 1
"""`_ENCODING_VERSION` of torch's serializer (2.11 and 2.13)."""
TYPES = frozenset({"inductor", "aot_autograd", "autotune", "pgo", "precompile"})
"""Artifact types torch 2.11 and 2.13 register (`CacheArtifactManager._ensure_cache_artifacts_registered`); a test
compares this with the installed torch's registry."""


class NotArtifacts(ValueError):
    """Not a cache-artifacts file torch can load: one line saying why."""


def types(data: bytes) -> dict[str, list[str]]:
    """Artifact type -> keys, when `data` is a well-formed container with safe keys; NotArtifacts otherwise."""
    if len(data) < 12:
        raise NotArtifacts(f"{len(data)} bytes, too short for torch's cache-artifacts header")
    if zlib.crc32(data[4:]).to_bytes(4, "big") != data[:4]:
        raise NotArtifacts("its checksum does not match: damaged, or not a file `save_cache_artifacts()` wrote")
    reader = _Reader(data, 4)
    version = reader.uint64()
    if version != VERSION:
        raise NotArtifacts(f"format version {version}, torch 2.11-2.13 read {VERSION}")
    out: dict[str, list[str]] = {}
    while not reader.done():
        kind = reader.text("an artifact type")
        if kind not in TYPES:
            raise NotArtifacts(f"unknown artifact type {kind[:40]!r} (torch 2.11-2.13 know {', '.join(sorted(TYPES))})")
        count = reader.uint64()
        if count > reader.left() // 16:
            raise NotArtifacts(f"{count} {kind} artifacts announced, more than the file can hold")
        for _ in range(count):
            key = reader.text(f"a {kind} key")
            _check_key(kind, key)
            reader.chunk(f"the content of {kind} artifact {key[:40]!r}")
            out.setdefault(kind, []).append(key)
    return out


def _check_key(kind: str, key: str) -> None:
    """Keys become paths under the cache dir: refuse one that is empty, absolute or climbs out with `..`."""
    parts = key.replace("\\", "/").split("/")
    if not key or "\0" in key or parts[0] == "" or ".." in parts:
        raise NotArtifacts(f"{kind} key {key[:60]!r} is not a plain name: it would be written outside the cache dir")


class _Reader:
    """A bounds-checked cursor over the container (torch's own reader slices past the end silently)."""

    def __init__(self, data: bytes, at: int) -> None:
        self.data, self.at = data, at

    def done(self) -> bool:
        return self.at == len(self.data)

    def left(self) -> int:
        return len(self.data) - self.at

    def uint64(self) -> int:
        if self.left() < 8:
            raise NotArtifacts(f"truncated at byte {self.at}")
        value = int.from_bytes(self.data[self.at : self.at + 8], "big")
        self.at += 8
        return value

    def chunk(self, what: str) -> bytes:
        size = self.uint64()
        if size > self.left():
            raise NotArtifacts(f"{what} runs {size - self.left()} bytes past the end of the file (truncated?)")
        out = self.data[self.at : self.at + size]
        self.at += size
        return out

    def text(self, what: str) -> str:
        try:
            return base64.b64decode(self.chunk(what), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise NotArtifacts(f"{what} at byte {self.at} is not base64 of UTF-8 text") from None
