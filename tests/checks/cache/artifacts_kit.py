"""What the trust tests load: torch's cache-artifacts container written by hand (the format of
`torch/utils/_appending_byte_serializer.py`, 2.11 and 2.13), a pickle that runs code when unpickled, and a real
artifacts file saved by torch from a real Inductor compile (`python artifacts_kit.py OUT`, in a subprocess)."""

from __future__ import annotations

import base64
import pickle
import sys
import zlib


def container(entries: dict[str, list[tuple[str, bytes]]]) -> bytes:
    """CRC32, version 1, then per type its name, count and (key, content) pairs, as `save_cache_artifacts()` writes."""
    body = (1).to_bytes(8, "big")
    for kind, items in entries.items():
        body += _chunk(base64.b64encode(kind.encode())) + len(items).to_bytes(8, "big")
        for key, content in items:
            body += _chunk(base64.b64encode(key.encode())) + _chunk(content)
    return zlib.crc32(body).to_bytes(4, "big") + body


def _chunk(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


class Plant:
    """Unpickling it creates `marker` (`open(marker, "w")`): the shape of a planted payload, harmless here."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (self.marker, "w"))


def payload(marker: str) -> bytes:
    """An artifacts file whose Inductor entry is the planted pickle (torch 2.13 unpickles it while loading)."""
    return container(
        {"inductor": [("fplantedkey0000000000000000000000000000000000000000000", pickle.dumps(Plant(marker)))]}
    )


def entries(data: bytes) -> dict[str, list[tuple[str, bytes]]]:
    """The (key, content) pairs of each type in an artifacts file (the inverse of `container`)."""
    at, out = 12, {}

    def chunk() -> bytes:
        nonlocal at
        size = int.from_bytes(data[at : at + 8], "big")
        at += 8 + size
        return data[at - size : at]

    while at < len(data):
        kind = base64.b64decode(chunk()).decode()
        count = int.from_bytes(data[at : at + 8], "big")
        at += 8
        out[kind] = [(base64.b64decode(chunk()).decode(), chunk()) for _ in range(count)]
    return out


def resealed(data: bytes) -> bytes:
    """`data` with its Inductor entry cut in half and the checksum recomputed: what someone who edits the file can
    do (only torch's unpickling notices)."""
    parsed = entries(data)
    parsed["inductor"] = [(key, content[: len(content) // 2]) for key, content in parsed["inductor"]]
    return container(parsed)


def save_real(out: str) -> None:
    """Compile a small function with Inductor and save torch's portable cache artifacts to `out`."""
    import torch

    @torch.compile(backend="inductor")
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2

    f(torch.randn(4, 8))
    saved = torch.compiler.save_cache_artifacts()
    assert saved is not None, "torch saved no artifacts"
    with open(out, "wb") as fh:
        fh.write(saved[0])


if __name__ == "__main__":
    save_real(sys.argv[1])
