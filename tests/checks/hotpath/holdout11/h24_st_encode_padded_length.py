"""Hazard: `SentenceTransformer.encode` sorts the sentences by length, tokenizes each batch with padding to the longest sentence in it and runs the compiled transformer, so the padded sequence length changes from batch to batch and the first new length recompiles both compiled frames (with `dynamic=False` every new length does). From huggingface/sentence-transformers#3791 (benchmarking plain vs. compiled encode: recompiles per sequence length, bucketed padding as the fix)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/sentence-transformers/pull/3791"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 2, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 2, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)
FRAMES = 2  # on torch 2.13 the Sequential root runs its two modules' forwards as two frames (Transformer, Pooling)


class Transformer(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 8) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim, padding_idx=0)
        self.layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        mask = features["attention_mask"]
        hidden = self.layer(self.embeddings(features["input_ids"]), src_key_padding_mask=mask == 0)
        features["token_embeddings"] = hidden
        return features


class Pooling(nn.Module):
    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        mask = features["attention_mask"].unsqueeze(-1).float()
        features["sentence_embedding"] = (features["token_embeddings"] * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return features


class SentenceTransformer(nn.Sequential):
    def tokenize(self, texts: list[list[int]]) -> dict[str, torch.Tensor]:
        longest = max(len(t) for t in texts)  # padding=True: pad to the longest text of the batch
        ids = torch.zeros(len(texts), longest, dtype=torch.long)
        mask = torch.zeros(len(texts), longest, dtype=torch.long)
        for row, t in enumerate(texts):
            ids[row, : len(t)] = torch.tensor(t)
            mask[row, : len(t)] = 1
        return {"input_ids": ids, "attention_mask": mask}

    def encode(self, sentences: list[list[int]], batch_size: int = 4) -> torch.Tensor:
        order = sorted(range(len(sentences)), key=lambda k: -len(sentences[k]))
        out = []
        with torch.no_grad():
            for start in range(0, len(sentences), batch_size):
                batch = [sentences[k] for k in order[start : start + batch_size]]
                out.append(self(self.tokenize(batch))["sentence_embedding"])
        return torch.cat(out)


def build() -> nn.Module:
    return SentenceTransformer(Transformer(), Pooling())


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    lengths = [[5, 3, 4, 2], [7, 6, 2, 3], [4, 4, 4, 4], [9, 2, 2, 5], [6, 5, 3, 3], [3, 3, 2, 2], [8, 1, 4, 4], [5, 5, 5, 1]][i]
    sentences = [torch.randint(1, 50, (n,), generator=g).tolist() for n in lengths]
    model.encode(sentences)
