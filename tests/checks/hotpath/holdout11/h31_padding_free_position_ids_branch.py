"""Hazard: padding-free SFT (TRL `padding_free=True` / `DataCollatorWithFlattening`) feeds one packed row with `position_ids` that restart at 0 for each example; the attention forward checks `not (torch.diff(position_ids, dim=-1) >= 0).all()` in a Python `if` to detect packing and takes `position_ids.max().item()` for the kernel's max length, so every compiled training step breaks the graph at the data-dependent check. From huggingface/transformers#33932 (remove graph breaks in `flash_attention_forward` when a Llama model is padding-free tuned with `torch_compile`)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/pull/33932"
OBSERVED = {"compiles_over_8_steps": 11, "graph_breaks": 7}


def prepare_fa2_from_position_ids(position_ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    indices = torch.arange(position_ids.size(1), device=position_ids.device)
    starts = indices[position_ids[0] == 0]
    cu_seq_lens = torch.cat([starts, torch.tensor([position_ids.size(1)])]).to(torch.int32)
    max_length = position_ids.max().item() + 1
    return cu_seq_lens, max_length


def _flash_attention_forward(q, k, v, attention_mask, query_length, position_ids=None):
    if position_ids is not None and q.shape[0] == 1 and (query_length != 1 and not (torch.diff(position_ids, dim=-1) >= 0).all()):
        cu_seq_lens, max_length = prepare_fa2_from_position_ids(position_ids)
        seq_id = torch.bucketize(torch.arange(q.shape[1]), cu_seq_lens[1:], right=True)
        mask = (seq_id[:, None] == seq_id[None, :]) & torch.ones(q.shape[1], q.shape[1], dtype=torch.bool).tril()
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class LlamaAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, hidden_states, position_ids):
        q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        out = _flash_attention_forward(q, k, v, None, hidden_states.shape[1], position_ids=position_ids)
        return self.o_proj(out)


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaAttention(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, position_ids, labels):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = h + layer(h, position_ids)
        logits = self.lm_head(h)
        return F.cross_entropy(logits[0, :-1], labels[0, 1:], ignore_index=-100)


def data_collator_with_flattening(examples: list[list[int]], total: int = 16) -> dict[str, torch.Tensor]:
    """Pack the examples into one row; position_ids restart per example; packed to a fixed budget of `total` tokens."""
    ids, pos, labels = [], [], []
    for ex in examples:
        ids += ex
        pos += list(range(len(ex)))
        labels += [-100] + ex[1:]
    return {"input_ids": torch.tensor([ids[:total]]), "position_ids": torch.tensor([pos[:total]]), "labels": torch.tensor([labels[:total]])}


def build() -> nn.Module:
    return LlamaForCausalLM()


def step(model: nn.Module, i: int) -> None:
    lengths = [(5, 11), (8, 8), (3, 6, 7), (10, 6), (4, 4, 8), (9, 7), (6, 10), (2, 14)][i]
    g = torch.Generator().manual_seed(i)
    batch = data_collator_with_flattening([torch.randint(1, 32, (n,), generator=g).tolist() for n in lengths])
    loss = model(**batch)
    loss.backward()
