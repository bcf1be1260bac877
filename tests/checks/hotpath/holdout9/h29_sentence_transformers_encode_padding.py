"""Hazard: SentenceTransformer.encode() sorts sentences by length and tokenizes each batch with `padding=True` (pad to the longest in the batch), so the compiled Transformer module sees a new sequence length on the next batches and recompiles (a dynamic-shape recompile; with `dynamic=False` one per length). From huggingface/sentence-transformers#3848 (make model.compile() apply to encode/predict; variable sequence lengths recompile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/sentence-transformers/pull/3848"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

VOCAB = {w: i + 1 for i, w in enumerate("a the cat sat on mat dog ran far away quick brown fox jumps over lazy".split())}


def tokenize(texts: list[str], max_seq_length: int = 16) -> dict:
    """Tokenizer call in `Transformer.tokenize`: padding=True, truncation=True."""
    ids = [[VOCAB.get(w, 0) for w in t.split()][:max_seq_length] for t in texts]
    longest = max(len(x) for x in ids)
    input_ids = torch.tensor([x + [0] * (longest - len(x)) for x in ids])
    return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long()}


class Transformer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(len(VOCAB) + 1, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 16, batch_first=True, dropout=0.0)

    def forward(self, features: dict) -> dict:
        h = self.layer(self.embeddings(features["input_ids"]))
        features["token_embeddings"] = h
        return features


class Pooling(nn.Module):
    def forward(self, features: dict) -> dict:
        mask = features["attention_mask"].unsqueeze(-1).float()
        features["sentence_embedding"] = (features["token_embeddings"] * mask).sum(1) / mask.sum(1)
        return features


class SentenceTransformer(nn.Sequential):
    pass


REGION = "0"

SENTENCES = [
    ["a cat", "the dog"],
    ["the cat sat", "a dog ran"],
    ["the cat sat on the mat", "a dog ran far away now"],
    ["quick brown fox", "lazy dog"],
    ["the quick brown fox jumps over the lazy dog", "a cat"],
    ["a cat", "the dog"],
    ["cat sat on mat", "dog ran far"],
    ["the cat", "a dog"],
]


def build() -> nn.Module:
    return SentenceTransformer(Transformer(), Pooling())


def step(model: nn.Module, i: int) -> None:
    batch = sorted(SENTENCES[i], key=len, reverse=True)  # encode() sorts by length before batching
    with torch.no_grad():
        model(tokenize(batch))
