"""Clean: the same padding-free SFT step (one packed row, `position_ids` restarting per example, fixed packing budget), but the attention builds the block-diagonal causal mask from `position_ids` with tensor ops only (`find_packed_sequence_indices`: the cumulative sum of `diff(position_ids) != 1`), with no Python `if` on a tensor and no `.item()`, so the compiled training step is one graph compiled once. Look-alike of h31 (huggingface/transformers#33932)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/33932"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def find_packed_sequence_indices(position_ids: torch.Tensor) -> torch.Tensor:
    """transformers.masking_utils: which packed sequence each token belongs to, computed on tensors."""
    first_dummy_value = position_ids[:, :1] - 1
    position_diff = torch.diff(position_ids, prepend=first_dummy_value, dim=-1)
    return (position_diff != 1).cumsum(-1)


def sdpa_attention_forward(q, k, v, position_ids):
    seq_id = find_packed_sequence_indices(position_ids)[0]
    causal = torch.ones(q.shape[1], q.shape[1], dtype=torch.bool, device=q.device).tril()
    mask = (seq_id[:, None] == seq_id[None, :]) & causal
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class LlamaAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, hidden_states, position_ids):
        q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        out = sdpa_attention_forward(q, k, v, position_ids)
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
