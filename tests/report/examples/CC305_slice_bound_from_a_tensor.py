"""CC305: a slice bound read from a tensor (`x[i, : lengths[i]]`, per-utterance normalisation in an ASR
preprocessor) turns the tensor into a Python int, a graph break; a bound from the shape (`x.shape[1]`) or a Python
int is traced."""
import torch
from torch import nn


def normalize(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    means = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        means[i] = x[i, : lengths[i]].mean()  # expect: CC305
    return x - means.unsqueeze(1) + x[:, : x.shape[1] // 2].sum()


class Preprocessor(nn.Module):
    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return normalize(x, lengths)


def build() -> nn.Module:
    return Preprocessor()
