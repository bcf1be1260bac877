"""Clean: the same DPO loop, but the collator pads every batch to the fixed `max_length` (the padding the open-instruct PR first added to avoid recompiles), so the compiled policy always sees the same shapes. Look-alike of allenai/open-instruct#1445."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/allenai/open-instruct/pull/1445"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

VOCAB = 32
PAD = 0


class TinyCausalLM(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 16, batch_first=True, dropout=0.0)
        self.lm_head = nn.Linear(dim, VOCAB)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.layer(self.embed_tokens(input_ids), src_key_padding_mask=attention_mask == 0)
        return self.lm_head(h)


class DataCollatorForPreference:
    """Pads chosen/rejected to the configured max_length, whatever the batch holds."""

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length

    def __call__(self, examples: list[list[int]]) -> dict[str, torch.Tensor]:
        longest = self.max_length
        ids = torch.full((len(examples), longest), PAD)
        mask = torch.zeros(len(examples), longest, dtype=torch.long)
        for row, e in enumerate(examples):
            ids[row, : len(e)] = torch.tensor(e)
            mask[row, : len(e)] = 1
        return {"input_ids": ids, "attention_mask": mask}


def concatenated_logps(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    logits = model(batch["input_ids"], batch["attention_mask"])[:, :-1]
    labels = batch["input_ids"][:, 1:]
    logps = logits.log_softmax(-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return (logps * batch["attention_mask"][:, 1:]).sum(-1)


_collator = DataCollatorForPreference(max_length=16)


def build() -> nn.Module:
    return TinyCausalLM()


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    lengths = [[5, 7], [9, 4], [6, 6], [3, 11], [8, 2], [10, 5], [4, 4], [12, 7]][i]
    examples = [torch.randint(1, VOCAB, (n,), generator=g).tolist() for n in lengths]
    batch = _collator(examples)
    logps = concatenated_logps(model, batch)
    chosen, rejected = logps[0], logps[1]
    loss = -torch.nn.functional.logsigmoid(0.1 * (chosen - rejected))
    loss.backward()
    model.zero_grad()
