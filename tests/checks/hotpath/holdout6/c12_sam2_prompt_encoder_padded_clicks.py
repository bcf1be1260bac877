"""Clean: the same compiled SAM2 `PromptEncoder.forward`, but the session pads the clicks of an object to a fixed
number of prompt points with the "not a point" label (-1), so the point tensors keep one shape across interactions
and the encoder compiles once. Look-alike of the hazard in facebookresearch/sam2#517 (repeated compilation of
PromptEncoder.forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/facebookresearch/sam2/issues/517"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PositionEmbeddingRandom(nn.Module):
    def __init__(self, num_pos_feats: int = 4) -> None:
        super().__init__()
        self.register_buffer("positional_encoding_gaussian_matrix", torch.randn((2, num_pos_feats)))

    def _pe_encoding(self, coords: torch.Tensor) -> torch.Tensor:
        coords = 2 * coords - 1
        coords = coords @ self.positional_encoding_gaussian_matrix
        coords = 2 * torch.pi * coords
        return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)

    def forward_with_coords(self, coords_input: torch.Tensor, image_size: tuple[int, int]) -> torch.Tensor:
        coords = coords_input.clone()
        coords[:, :, 0] = coords[:, :, 0] / image_size[1]
        coords[:, :, 1] = coords[:, :, 1] / image_size[0]
        return self._pe_encoding(coords.to(torch.float))


class PromptEncoder(nn.Module):
    def __init__(self, embed_dim: int = 8, input_image_size: tuple[int, int] = (64, 64)) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.input_image_size = input_image_size
        self.pe_layer = PositionEmbeddingRandom(embed_dim // 2)
        self.point_embeddings = nn.ModuleList([nn.Embedding(1, embed_dim) for _ in range(4)])
        self.not_a_point_embed = nn.Embedding(1, embed_dim)

    def _embed_points(self, points: torch.Tensor, labels: torch.Tensor, pad: bool) -> torch.Tensor:
        points = points + 0.5  # shift to center of pixel
        if pad:
            padding_point = torch.zeros((points.shape[0], 1, 2), device=points.device)
            padding_label = -torch.ones((labels.shape[0], 1), device=labels.device)
            points = torch.cat([points, padding_point], dim=1)
            labels = torch.cat([labels, padding_label], dim=1)
        point_embedding = self.pe_layer.forward_with_coords(points, self.input_image_size)
        labels = labels.unsqueeze(-1)
        not_a_point = self.not_a_point_embed.weight.expand_as(point_embedding)
        point_embedding = torch.where(labels == -1, not_a_point, point_embedding)
        point_embedding = point_embedding + (labels == 0) * self.point_embeddings[0].weight
        point_embedding = point_embedding + (labels == 1) * self.point_embeddings[1].weight
        return point_embedding

    def forward(self, points: tuple[torch.Tensor, torch.Tensor] | None, boxes: torch.Tensor | None,
                masks: torch.Tensor | None) -> torch.Tensor:
        bs = points[0].shape[0]
        sparse_embeddings = torch.empty((bs, 0, self.embed_dim))
        if points is not None:
            coords, labels = points
            point_embeddings = self._embed_points(coords, labels, pad=(boxes is None))
            sparse_embeddings = torch.cat([sparse_embeddings, point_embeddings], dim=1)
        return sparse_embeddings


class SAM2Base(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sam_prompt_encoder = PromptEncoder()

    def forward(self, point_inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.sam_prompt_encoder(points=(point_inputs["point_coords"], point_inputs["point_labels"]), boxes=None,
                                       masks=None)


REGION = "sam_prompt_encoder"


class VideoPredictorSession:
    """`add_new_points_or_box` keeps every click of the object and re-encodes all of them, padded to MAX_POINTS."""

    MAX_POINTS = 8

    def __init__(self) -> None:
        self.clicks: list[tuple[float, float, int]] = []

    def add_new_points(self, x: float, y: float, label: int) -> dict[str, torch.Tensor]:
        self.clicks.append((x, y, label))
        padded = self.clicks + [(0.0, 0.0, -1)] * (self.MAX_POINTS - len(self.clicks))
        coords = torch.tensor([[c[0], c[1]] for c in padded], dtype=torch.float32).unsqueeze(0)
        labels = torch.tensor([c[2] for c in padded], dtype=torch.int32).unsqueeze(0)
        return {"point_coords": coords, "point_labels": labels}


_session = VideoPredictorSession()


def build() -> nn.Module:
    global _session
    _session = VideoPredictorSession()
    return SAM2Base()


def step(model: nn.Module, i: int) -> None:
    point_inputs = _session.add_new_points(10.0 + 3 * i, 20.0 + 2 * i, label=i % 2)  # one more click
    with torch.no_grad():
        model(point_inputs)
