"""Hazard: a speech TDNN-F acoustic model is compiled and trained on batches from a length-bucketed sampler, so the frame dimension changes batch to batch; the subsampled output length `(T - 1) // 3 + 1` is computed from `x.size(1)` in Python and the model recompiles when a new frame count arrives (first compiled static, then again with a dynamic frame dimension), which in the report made the first epoch crawl. From pytorch/pytorch#97783 (the first epoch is very slow when using torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/97783"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

BUCKET_FRAMES = [12, 12, 20, 16, 9, 28, 20, 7]  # padded frame count of each batch from the bucketing sampler


class TDNNFLayer(nn.Module):
    def __init__(self, dim: int = 8, bottleneck: int = 4, context: int = 1, stride: int = 1) -> None:
        super().__init__()
        self.linear = nn.Conv1d(dim, bottleneck, 2 * context + 1, stride=stride, padding=context)
        self.affine = nn.Conv1d(bottleneck, dim, 1)
        self.norm = nn.BatchNorm1d(dim)
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.norm(self.affine(self.linear(x))))
        return y if self.stride > 1 else x + y


class TDNNFAcousticModel(nn.Module):
    def __init__(self, feat_dim: int = 8, num_pdfs: int = 8) -> None:
        super().__init__()
        self.input = nn.Conv1d(feat_dim, 8, 3, padding=1)
        self.subsample = TDNNFLayer(stride=3)
        self.layers = nn.Sequential(TDNNFLayer(), TDNNFLayer())
        self.output = nn.Linear(8, num_pdfs)

    def forward(self, feats: torch.Tensor) -> tuple[torch.Tensor, int]:  # feats: (batch, frames, feat_dim)
        num_frames = feats.size(1)
        out_frames = (num_frames - 1) // 3 + 1
        x = self.layers(self.subsample(self.input(feats.transpose(1, 2))))
        return self.output(x.transpose(1, 2))[:, :out_frames].log_softmax(-1), out_frames


def build() -> nn.Module:
    return TDNNFAcousticModel()


def step(model: nn.Module, i: int) -> None:
    feats = torch.randn(4, BUCKET_FRAMES[i], 8)
    logprobs, out_frames = model(feats)
    targets = torch.randint(0, 8, (4, out_frames))
    torch.nn.functional.nll_loss(logprobs.reshape(-1, 8), targets.reshape(-1)).backward()
