"""Torch's portable cache-artifacts container, read in pure Python before torch sees a byte of it.

`torch.compiler.save_cache_artifacts()` writes (the same bytes in torch 2.11, 2.13 and 2.15:
`torch/utils/_appending_byte_serializer.py` is unchanged, and `_serialize_single_cache` / `_deserialize_single_cache`
in `torch/compiler/_cache.py` too): a big-endian CRC32 of everything after it (4 bytes), the encoding version (uint64,
1), then per artifact type: its name (length-prefixed base64 of UTF-8), a count (uint64), and per artifact its key
(length-prefixed base64) and content (length-prefixed bytes). The content is one pickle (`pickle.dumps` of the entry)
for every type but autotune, whose content is JSON.

Torch checks only the CRC: on a damaged or foreign file it logs a traceback on stderr; a length past the end makes its
reader loop forever; a key with `..` (an autotune key is joined to the cache dir) writes outside the cache dir; and an
entry cut short with its CRC recomputed is written into the cache dir unread (torch 2.11, 2.15), where the next compile
of its key fails to unpickle it with a traceback on stderr. So every length, name, key and content is checked here,
and a file that fails never reaches torch. Nothing here unpickles or imports torch: a pickle's opcodes are walked with
`pickletools.genops`, which decodes them and builds no object.
"""

from __future__ import annotations

import base64
import binascii
import json
import pickletools
import zlib

VERSION = 1
"""`_ENCODING_VERSION` of torch's serializer (2.11-2.15)."""
TYPES = frozenset({"inductor", "aot_autograd", "autotune", "pgo", "precompile"})
"""Artifact types torch 2.11-2.15 register (`CacheArtifactManager._ensure_cache_artifacts_registered`); a test
compares this with the installed torch's registry."""
JSON_TYPES = frozenset({"autotune"})
"""Types whose content is JSON (`AutotuneCacheArtifact.encode`: `RemoteCacheJsonSerde`); the others are pickles."""
KNOWN = "torch 2.11-2.15"


class NotArtifacts(ValueError):
    """Not a cache-artifacts file torch can load: one line saying why and where."""


def types(data: bytes) -> dict[str, list[str]]:
    """Artifact type -> keys, when `data` is a well-formed container with safe keys; NotArtifacts otherwise."""
    if len(data) < 12:
        raise NotArtifacts(f"{len(data)} bytes, too short for torch's cache-artifacts header")
    if zlib.crc32(data[4:]).to_bytes(4, "big") != data[:4]:
        raise NotArtifacts("its checksum does not match: damaged, or not a file `save_cache_artifacts()` wrote")
    reader = _Reader(data, 4)
    version = reader.uint64()
    if version != VERSION:
        raise NotArtifacts(f"format version {version} at byte 4, {KNOWN} write and read {VERSION}")
    out: dict[str, list[str]] = {}
    while not reader.done():
        kind = reader.text("an artifact type")
        if kind not in TYPES:
            raise NotArtifacts(f"unknown artifact type {kind[:40]!r} ({KNOWN} know {', '.join(sorted(TYPES))})")
        count = reader.uint64()
        if count > reader.left() // 16:
            raise NotArtifacts(f"{count} {kind} artifacts announced, more than the file can hold")
        for _ in range(count):
            key = reader.text(f"a key of the {kind} artifacts")
            _check_key(kind, key)
            content = reader.chunk(f"the content of {kind} artifact {key[:40]!r}")
            _check_content(kind, key, content, reader.at - len(content))
            out.setdefault(kind, []).append(key)
    if not out:
        raise NotArtifacts("it holds no artifacts (`save_cache_artifacts()` never writes an empty file)")
    return out


def _check_key(kind: str, key: str) -> None:
    """Keys become paths under the cache dir: refuse one that is empty, absolute or climbs out with `..`."""
    parts = key.replace("\\", "/").split("/")
    if not key or "\0" in key or parts[0] == "" or ".." in parts:
        raise NotArtifacts(f"{kind} key {key[:60]!r} is not a plain name: it would be written outside the cache dir")


def _check_content(kind: str, key: str, content: bytes, at: int) -> None:
    """An entry torch would fail to read back (at load or at the next compile of its key) is refused here."""
    where = f"the content of {kind} artifact {key[:40]!r} (bytes {at}-{at + len(content)})"
    if kind in JSON_TYPES:
        _check_json(where, content)
    else:
        _check_pickle(where, content)


def _check_pickle(where: str, content: bytes) -> None:
    """One complete pickle and nothing after it, as `pickle.dumps` writes: its opcodes walked, nothing run."""
    stop = -1
    try:
        for _, _, pos in pickletools.genops(content):
            stop = pos if pos is not None else stop
    except Exception as exc:  # genops raises ValueError (and struct/Unicode errors) on any malformed stream
        raise NotArtifacts(f"{where} is not a complete pickle (cut short or damaged: {str(exc)[:80]})") from None
    if stop + 1 != len(content):
        raise NotArtifacts(f"{where} has {len(content) - stop - 1} bytes after the end of its pickle")


def _check_json(where: str, content: bytes) -> None:
    """Autotune entries are JSON; torch's reader would fail on anything else at the next compile."""
    try:
        json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise NotArtifacts(f"{where} is not JSON (cut short or damaged: {str(exc)[:80]})") from None


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
        start = self.at
        try:
            return base64.b64decode(self.chunk(what), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise NotArtifacts(f"{what} at byte {start} is not base64 of UTF-8 text") from None
