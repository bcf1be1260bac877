"""Clean: the same DPO loop pads every batch to a fixed `max_length` (the workaround given in pytorch/pytorch#188150), so the compiled policy always sees one shape and compiles once."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/188150"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

PAD_TOKEN_ID = 0
_LENGTHS = [(5, 3), (7, 4), (6, 6), (3, 2), (8, 5), (4, 4), (7, 7), (5, 2)]  # prompt+completion lengths per batch


class TinyCausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids) * attention_mask.unsqueeze(-1)
        return self.lm_head(torch.relu(self.proj(h)))


class DataCollatorForPreference:
    """Pads chosen/rejected to the longest sequence *in this batch* (pad_to_multiple_of=None)."""

    def __init__(self, pad_token_id: int, max_length: int | None = None) -> None:
        self.pad_token_id = pad_token_id
        self.max_length = max_length

    def __call__(self, examples: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        target = self.max_length or max(len(e) for e in examples)
        input_ids = torch.full((len(examples), target), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(examples), target), dtype=torch.long)
        for row, ex in enumerate(examples):
            input_ids[row, : len(ex)] = ex
            attention_mask[row, : len(ex)] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask}


collator = DataCollatorForPreference(PAD_TOKEN_ID, max_length=16)


def build() -> nn.Module:
    return TinyCausalLM()


def step(model: nn.Module, i: int) -> None:
    a, b = _LENGTHS[i]
    examples = [torch.randint(1, 16, (a + b,)), torch.randint(1, 16, (max(a, b),))]
    batch = collator(examples)
    logits = model(batch["input_ids"], batch["attention_mask"])
    logps = torch.log_softmax(logits, dim=-1).gather(-1, batch["input_ids"].unsqueeze(-1)).squeeze(-1)
    loss = -(logps * batch["attention_mask"]).sum() / batch["attention_mask"].sum()
    loss.backward()
    model.zero_grad(set_to_none=True)
