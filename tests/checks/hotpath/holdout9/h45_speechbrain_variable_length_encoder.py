"""Hazard: a speech recipe compiles its Conformer encoder module by key (`compile_module_keys`) and feeds it batches whose time dimension is the longest utterance of each batch, so the first new length fails the size guard and recompiles (then the length is made dynamic). From speechbrain/speechbrain#2824 (changing --compile defaults because SB only has variable sequences)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/speechbrain/speechbrain/pull/2824"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "encoder"


class ConformerEncoder(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(d_model, d_model), nn.SiLU(), nn.Linear(d_model, d_model))
        self.conv = nn.Conv1d(d_model, d_model, kernel_size=3, padding=1, groups=d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, src: torch.Tensor, src_key_padding_mask: torch.Tensor) -> torch.Tensor:
        x = src + 0.5 * self.ffn(src)
        x = x + self.conv(x.transpose(1, 2)).transpose(1, 2)
        x = x.masked_fill(src_key_padding_mask.unsqueeze(-1), 0.0)
        return self.norm(x)


class ASRBrain:
    """The recipe's Brain: not a module itself, it drives `self.modules` (CNN front-end, encoder, CTC head)."""

    def __init__(self, modules: nn.ModuleDict) -> None:
        self.modules = modules

    def compute_forward(self, feats: torch.Tensor, wav_lens: torch.Tensor) -> torch.Tensor:
        src = self.modules["CNN"](feats)
        abs_lens = (wav_lens * feats.shape[1]).round().long()
        mask = torch.arange(feats.shape[1])[None, :] >= abs_lens[:, None]
        enc = self.modules["encoder"](src, src_key_padding_mask=mask)
        return self.modules["ctc_lin"](enc).log_softmax(-1)


def build() -> nn.Module:
    return nn.ModuleDict({"CNN": nn.Linear(4, 8), "encoder": ConformerEncoder(), "ctc_lin": nn.Linear(8, 6)})


def step(model: nn.Module, i: int) -> None:
    # dynamic batching: each batch padded to its own longest utterance
    max_len = [12, 17, 9, 21, 14, 12, 19, 11][i]
    feats = torch.randn(2, max_len, 4)
    wav_lens = torch.tensor([1.0, 0.8])
    ASRBrain(model).compute_forward(feats, wav_lens).mean().backward()
