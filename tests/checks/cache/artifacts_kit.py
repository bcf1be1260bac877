"""What the trust tests load: torch's cache-artifacts container written by hand (the format of
`torch/utils/_appending_byte_serializer.py`, unchanged in 2.11-2.15), a pickle that runs code when unpickled, and real
artifacts files saved, loaded and compiled against by torch in a subprocess (`python artifacts_kit.py save OUT`,
`load FILE`, `compile`)."""

from __future__ import annotations

import base64
import pickle
import sys
import zlib
from collections.abc import Callable
from typing import Any


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
    do (torch's checksum does not notice; the reader's pickle walk does)."""
    parsed = entries(data)
    parsed["inductor"] = [(key, content[: len(content) // 2]) for key, content in parsed["inductor"]]
    return container(parsed)


def planted(data: bytes, marker: str) -> bytes:
    """`data` with every pickled entry replaced by the payload under its real key: what the next compile of that key
    unpickles, whether or not torch's loader does."""
    return container(
        {
            kind: [(key, content if kind == "autotune" else pickle.dumps(Plant(marker))) for key, content in items]
            for kind, items in entries(data).items()
        }
    )


def relu2(x: Any) -> Any:
    """The function the kit compiles: its cache keys are the same in every process of one torch and cache config."""
    import torch

    return torch.relu(x) * 2


def compile_once() -> None:
    """Compile and run `relu2` with Inductor (a cache hit where its entries are in the cache dir)."""
    import torch

    torch.compile(relu2, backend="inductor")(torch.randn(4, 8))


def save_real(out: str) -> None:
    """Compile `relu2` with Inductor and save torch's portable cache artifacts to `out`."""
    import torch

    compile_once()
    saved = torch.compiler.save_cache_artifacts()
    assert saved is not None, "torch saved no artifacts"
    with open(out, "wb") as fh:
        fh.write(saved[0])


def load(path: str) -> None:
    """`torch.compiler.load_cache_artifacts()` on the file, and nothing else."""
    import torch

    with open(path, "rb") as fh:
        torch.compiler.load_cache_artifacts(fh.read())


if __name__ == "__main__":
    COMMANDS: dict[str, Callable[..., None]] = {"save": save_real, "load": load, "compile": compile_once}
    COMMANDS[sys.argv[1]](*sys.argv[2:])
