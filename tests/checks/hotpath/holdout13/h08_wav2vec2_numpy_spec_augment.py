"""Hazard: a wav2vec 2.0 style encoder applies SpecAugment inside its compiled forward during fine-tuning: `_compute_mask_indices` draws the number and start of the masked spans with NumPy's random generator (`.item()` on the draw, Python loops over the batch and over data-dependent starts), which Dynamo cannot keep in the graph: the forward is split into several compiled pieces around the mask computation and the loop over the drawn starts falls back to eager. From pytorch/pytorch#101160 (fine-tuning HuggingFace wav2vec 2.0 with `torch.compile`; `_compute_mask_indices` is dynamic and in NumPy)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/101160"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 4}


def _compute_mask_indices(shape: tuple[int, int], mask_prob: float, mask_length: int, min_masks: int = 0) -> np.ndarray:
    batch_size, sequence_length = shape
    epsilon = np.random.rand(1).item()
    num_masked_span = max(int(mask_prob * sequence_length / mask_length + epsilon), min_masks)
    spec_aug_mask = np.zeros((batch_size, sequence_length), dtype=bool)
    for b in range(batch_size):
        starts = np.random.choice(np.arange(sequence_length - (mask_length - 1)), num_masked_span, replace=False)
        for s in starts:
            spec_aug_mask[b, s : s + mask_length] = True
    return spec_aug_mask


class Wav2Vec2Encoder(nn.Module):
    def __init__(self, hidden: int = 8, mask_time_prob: float = 0.3, mask_time_length: int = 2) -> None:
        super().__init__()
        self.config_apply_spec_augment = True
        self.mask_time_prob, self.mask_time_length = mask_time_prob, mask_time_length
        self.feature_projection = nn.Linear(hidden, hidden)
        self.masked_spec_embed = nn.Parameter(torch.rand(hidden))
        self.encoder = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.lm_head = nn.Linear(hidden, 6)

    def _mask_hidden_states(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if not self.config_apply_spec_augment or not self.training:
            return hidden_states
        batch_size, sequence_length, _ = hidden_states.size()
        mask_time_indices = _compute_mask_indices((batch_size, sequence_length), self.mask_time_prob, self.mask_time_length, min_masks=2)
        mask_time_indices = torch.tensor(mask_time_indices, device=hidden_states.device, dtype=torch.bool)
        hidden_states = hidden_states.clone()
        hidden_states[mask_time_indices] = self.masked_spec_embed.to(hidden_states.dtype)
        return hidden_states

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        hidden_states = self.feature_projection(input_features)
        hidden_states = self._mask_hidden_states(hidden_states)
        return self.lm_head(self.encoder(hidden_states))


def build() -> nn.Module:
    np.random.seed(0)
    return Wav2Vec2Encoder()


def step(model: nn.Module, i: int) -> None:
    logits = model(torch.randn(2, 10, 8))
    logits.log_softmax(-1).mean().backward()
