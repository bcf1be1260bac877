"""CC310: a wrapper the step calls edits the keyword dict a compiled attention spreads (`**self.extra_kwargs`)
through a local alias: it adds the varlen keys when the request needs padding and pops them when it does not, so
the dict's key set, which Dynamo guards, flips between calls. Updating the same named keys on every call
(`kwargs.update(mask=...)`) keeps the key set and is not reported."""
import torch
import torch.nn.functional as F
from torch import nn

VARLEN = ("cu_seqlens", "valid_len")


def attention(q, k, v, cu_seqlens=None, valid_len=None, mask=None):
    if mask is not None:
        q = q * mask
    return F.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.extra_kwargs: dict[str, torch.Tensor] = {}
        self.masks: dict[str, torch.Tensor] = {}

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return attention(q, k, v, **self.extra_kwargs) + attention(q, k, v, **self.masks)


class Wrapper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()

    def prepare(self, tokens: int) -> None:
        kwargs = self.attn.extra_kwargs
        if tokens < 8:
            kwargs.update(cu_seqlens=torch.tensor([0, tokens, 8]), valid_len=torch.tensor(tokens))
        else:
            for key in VARLEN:
                kwargs.pop(key, None)  # expect: CC310 warning
        masks = self.attn.masks
        masks.update(mask=(torch.arange(8) < tokens).float().unsqueeze(1))


REGION = "attn"


def build() -> nn.Module:
    return Wrapper()


def step(model, i):
    model.prepare([8, 6, 8, 7][i % 4])
    with torch.no_grad():
        model.attn(torch.randn(8, 8))
