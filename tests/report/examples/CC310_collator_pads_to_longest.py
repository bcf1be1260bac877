"""CC310: a collator object that pads each batch to its longest example (a dynamic-padding data collator) hands the
compiled model a new sequence length whenever the examples' lengths change: Dynamo recompiles for the first new
length, then compiles a dynamic graph. The same collator set to a fixed `max_length` pads every batch alike and is
not reported; how many examples a batch holds does not change."""
import torch
from torch import nn

REGION = "*_model"
LENGTHS = [(5, 3), (7, 4), (6, 6), (3, 2)]


class LM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, input_ids, attention_mask):
        return self.head(self.embed(input_ids) * attention_mask.unsqueeze(-1))


class Pair(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.policy_model = LM()
        self.reference_model = LM()


class Collator:
    def __init__(self, pad_id: int, max_length: int | None = None) -> None:
        self.pad_id = pad_id
        self.max_length = max_length

    def __call__(self, examples):
        target = self.max_length or max(len(e) for e in examples)
        input_ids = torch.full((len(examples), target), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(examples), target), dtype=torch.long)
        for row, ex in enumerate(examples):
            input_ids[row, : len(ex)] = ex
            attention_mask[row, : len(ex)] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask}


dynamic = Collator(0)
fixed = Collator(0, max_length=16)


def build() -> nn.Module:
    return Pair()


def step(model, i):
    a, b = LENGTHS[i % 4]
    examples = [torch.randint(1, 16, (a + b,)), torch.randint(1, 16, (max(a, b),))]
    batch = dynamic(examples)
    model.policy_model(batch["input_ids"], batch["attention_mask"])  # expect: CC310 warning
    padded = fixed(examples)
    with torch.no_grad():
        model.reference_model(padded["input_ids"], padded["attention_mask"])
