"""Clean: the same wav2vec 2.0 style encoder, but the SpecAugment time mask is drawn by the data collator (NumPy, outside the compiled model) and passed into forward as the `mask_time_indices` bool tensor, so the compiled forward only does the masked fill. Look-alike of pytorch/pytorch#101160 (the usual workaround: precompute the mask in the collator)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/101160"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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


class DataCollatorForWav2Vec2Pretraining:
    def __init__(self, mask_time_prob: float = 0.3, mask_time_length: int = 2) -> None:
        self.mask_time_prob, self.mask_time_length = mask_time_prob, mask_time_length

    def __call__(self, features: torch.Tensor) -> dict[str, torch.Tensor]:
        batch_size, sequence_length, _ = features.shape
        mask = _compute_mask_indices((batch_size, sequence_length), self.mask_time_prob, self.mask_time_length, min_masks=2)
        return {"input_features": features, "mask_time_indices": torch.tensor(mask, dtype=torch.bool)}


class Wav2Vec2Encoder(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.feature_projection = nn.Linear(hidden, hidden)
        self.masked_spec_embed = nn.Parameter(torch.rand(hidden))
        self.encoder = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.lm_head = nn.Linear(hidden, 6)

    def forward(self, input_features: torch.Tensor, mask_time_indices: torch.Tensor) -> torch.Tensor:
        hidden_states = self.feature_projection(input_features)
        hidden_states = torch.where(mask_time_indices[..., None], self.masked_spec_embed.to(hidden_states.dtype), hidden_states)
        return self.lm_head(self.encoder(hidden_states))


_collator = DataCollatorForWav2Vec2Pretraining()


def build() -> nn.Module:
    np.random.seed(0)
    return Wav2Vec2Encoder()


def step(model: nn.Module, i: int) -> None:
    batch = _collator(torch.randn(2, 10, 8))
    logits = model(**batch)
    logits.log_softmax(-1).mean().backward()
