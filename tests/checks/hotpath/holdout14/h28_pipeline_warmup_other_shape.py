"""Hazard: an IPEX-style model wrapper compiles the forward and warms it up once at load time with a fixed dummy prompt, but real pipeline calls tokenize prompts to other lengths; the first real prompt fails the static shape guard from the warm-up and compiles again (now with a dynamic sequence length), so the warm-up did not spare the first request a compile. From huggingface/optimum-intel#1189 (warm up does not work for compiled model because of different shapes)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/optimum-intel/pull/1189"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 6, "graph_breaks": 2}, "2.12": {"compiles_over_8_steps": 6, "graph_breaks": 2}}  # 2.11: measured on torch 2.11.0+cu130 (CPU tensors); 2.12 measured on the CPU-only machine (2.12.1+cu130)


class BertForSequenceClassification(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 8, num_labels: int = 3) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)
        self.classifier = nn.Linear(dim, num_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(self.embeddings(input_ids), src_key_padding_mask=attention_mask == 0)
        return self.classifier(hidden[:, 0])


class IPEXModel(nn.Module):
    """Loads the model, compiles it in place (the harness does) and runs `_init_warmup` with a dummy input."""

    def __init__(self) -> None:
        super().__init__()
        self.model = BertForSequenceClassification()
        self.warmed_up = False

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, attention_mask)

    def _init_warmup(self) -> None:
        dummy = torch.ones(1, 16, dtype=torch.long)
        for _ in range(2):
            self(dummy, torch.ones_like(dummy))
        self.warmed_up = True


def build() -> nn.Module:
    return IPEXModel().eval()


_PROMPT_LENGTHS = [27, 27, 5, 27, 5, 5, 27, 5]  # "This was a masterpiece. ..." and "I am not happy."


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        if not model.warmed_up:
            model._init_warmup()
        n = _PROMPT_LENGTHS[i]
        input_ids = torch.randint(1, 64, (1, n))
        model(input_ids, torch.ones_like(input_ids))
