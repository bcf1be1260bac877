"""A graph-break site reached inside a Python loop of the compiled frame says that Dynamo skips the whole frame."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from contract.pipeline import check


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("layer")
        return self.proj(x)


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(2))
        self.head = Layer()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def messages(tmp_path: Path, module: str) -> list[str]:
    path = tmp_path / "c.toml"
    path.write_text(f'[contract]\nname = "s"\n\n[[region]]\nname = "r"\nmodule = "{module}"\nbackend = "eager"\n')
    _, _, found = check(path, Stack())
    return [f.message for f in found if f.code == "CC304"]


def test_a_break_in_a_layer_called_from_the_loop_says_the_frame_is_skipped(tmp_path: Path) -> None:
    (message,) = messages(tmp_path, "")
    assert "skips the whole compiled frame" in message


def test_the_same_break_compiled_per_layer_is_a_plain_break(tmp_path: Path) -> None:
    (message,) = messages(tmp_path, "layers.*")
    assert "breaks the graph every call" in message and "skips" not in message
