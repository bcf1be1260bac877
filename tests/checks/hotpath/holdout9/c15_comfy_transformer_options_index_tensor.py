"""Clean: the same ComfyUI low-VRAM sampler running cond and uncond as separate calls, but the compiled model reads which rows are cond/uncond from a tensor (`cond_or_uncond` turned into an index tensor before the call) and never touches the Python list, so the alternating `[0]`/`[1]` does not reach a guard. From Comfy-Org/ComfyUI#11317 (disable guards on transformer_options when torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Comfy-Org/ComfyUI/pull/11317"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class DiTBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        patches = transformer_options.get("patches", {})
        h = self.attn(x)
        for p in patches.get("attn1_output_patch", []):
            h = p(h, transformer_options)
        return x + h + self.mlp(x)


class DiffusionModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([DiTBlock() for _ in range(2)])
        self.cond_scale = nn.Parameter(torch.ones(2, 1, 8))

    def forward(self, x: torch.Tensor, timestep: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        # per-sample conditioning row picked by whether each batch entry is cond (0) or uncond (1)
        scale = self.cond_scale.index_select(0, transformer_options["cond_or_uncond_index"])
        x = x * scale + timestep.view(-1, 1, 1)
        for i, block in enumerate(self.blocks):
            transformer_options["block_index"] = i
            x = block(x, transformer_options)
        return x


def calc_cond_batch(model: nn.Module, x: torch.Tensor, sigma: torch.Tensor, cond_or_uncond: list) -> torch.Tensor:
    transformer_options = {
        "patches": {},
        "cond_or_uncond_index": torch.tensor(cond_or_uncond, dtype=torch.long),
        "sigmas": sigma,
    }
    batch = x.repeat(len(cond_or_uncond), 1, 1)
    return model(batch, sigma.repeat(len(cond_or_uncond)), transformer_options)


def build() -> nn.Module:
    return DiffusionModel()


def step(model: nn.Module, i: int) -> None:
    sigma = torch.tensor([1.0 - i / 8])
    x = torch.randn(1, 4, 8)
    with torch.no_grad():
        # low VRAM: the cond and uncond halves of CFG run as two separate model calls
        cond = calc_cond_batch(model, x, sigma, [0])
        uncond = calc_cond_batch(model, x, sigma, [1])
        _ = uncond + 7.0 * (cond - uncond)
