"""CC310: the step feeds sequences that grow every call (a decoding loop, a curriculum over lengths): Dynamo
recompiles for the first new length, then compiles a dynamic graph. A fixed length is not reported, nor is a region
whose contract marks the dimension dynamic (`dynamic_dims`, `dynamic = true`), a window that moves but keeps its
length (`torch.arange(i, i + 6)`), nor a changing size passed to a parameter the forward never reads (also through
a local alias it never reads)."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(64, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, tokens, attention_mask=None):
        mask = attention_mask  # kept for API compatibility
        return self.proj(self.embed(tokens)).mean(1)


def build() -> nn.Module:
    return Encoder()


def step(model, i):
    batch = torch.randint(0, 64, (2, 32))
    with torch.no_grad():
        model(batch[:, :16])
        model(torch.arange(i, i + 6)[None, :], torch.ones(2, 8 + i))
        prefix = batch[:, : 4 + i]
        model(prefix)  # expect: CC310 warning (the prefix grows by one token every call)
        return model(torch.randint(0, 64, (2, 8 + 2 * i)))  # expect: CC310 warning
