"""Clean: the same YOLO training loop with `compile=True`, but the train DataLoader is built with `drop_last=True`
when compiling (what ultralytics does since #21975), so every batch has the same size, the short tail of the epoch
is dropped, and the compiled `DetectionModel` compiles once. Look-alike of the hazard in
ultralytics/ultralytics#21975."""
from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

LABEL = None
SOURCE = "https://github.com/ultralytics/ultralytics/pull/21975"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class YOLODataset(Dataset):
    def __init__(self, n: int = 28) -> None:
        g = torch.Generator().manual_seed(0)
        self.images = torch.rand(n, 3, 16, 16, generator=g)
        self.cls = torch.randint(0, 4, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"img": self.images[index], "cls": self.cls[index]}


def build_dataloader(dataset: Dataset, batch: int, shuffle: bool = True, drop_last: bool = False) -> DataLoader:
    """ultralytics.data.build.build_dataloader, reduced."""
    return DataLoader(dataset, batch_size=batch, shuffle=shuffle, num_workers=0, drop_last=drop_last,
                      generator=torch.Generator().manual_seed(0))


class v8DetectionLoss:
    def __init__(self, model: nn.Module) -> None:
        self.nc = model.nc

    def __call__(self, preds: torch.Tensor, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        loss = nn.functional.cross_entropy(preds, batch["cls"])
        return loss * batch["img"].shape[0], loss.detach()


class DetectionModel(nn.Module):
    def __init__(self, nc: int = 4) -> None:
        super().__init__()
        self.nc = nc
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU(),
                                   nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, nc))
        self.criterion = None

    def forward(self, x: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        if isinstance(x, dict):  # for cases of training and validating while training.
            return self.loss(x)
        return self.predict(x)

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        if self.criterion is None:
            self.criterion = v8DetectionLoss(self)
        preds = self.forward(batch["img"])
        return self.criterion(preds, batch)


class DetectionTrainer:
    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.model.criterion = v8DetectionLoss(model)
        self.compile = True
        self.train_loader = build_dataloader(YOLODataset(), batch=8, shuffle=True, drop_last=self.compile)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        self._it = iter(self.train_loader)

    def next_batch(self) -> dict[str, torch.Tensor]:
        try:
            return next(self._it)
        except StopIteration:  # new epoch
            self._it = iter(self.train_loader)
            return next(self._it)


_trainer: DetectionTrainer | None = None


def build() -> nn.Module:
    global _trainer
    model = DetectionModel()
    _trainer = DetectionTrainer(model)
    return model


def step(model: nn.Module, i: int) -> None:
    trainer = _trainer
    batch = trainer.next_batch()
    loss, loss_items = model(batch)
    trainer.optimizer.zero_grad()
    loss.backward()
    trainer.optimizer.step()
