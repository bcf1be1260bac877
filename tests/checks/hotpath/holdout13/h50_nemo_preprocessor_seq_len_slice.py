"""Hazard: NeMo's ASR preprocessor (`AudioToMelSpectrogramPreprocessor` -> `FilterbankFeatures`) normalises features per utterance with `x[i, :, : seq_len[i]]`, slicing by a length read from a tensor inside a Python loop over the batch; under torch.compile the data-dependent slice cannot be traced, so the compiled preprocessor graph-breaks in the normalisation loop and is retraced as the lengths change. From pytorch/pytorch#112745 (torch.compile of a NeMo stt_en_conformer preprocessor: "graph break on slicing input data")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/112745"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 3}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 5, "graph_breaks": 4}, "2.15": {"compiles_over_8_steps": 5, "graph_breaks": 4}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)

CONSTANT = 1e-5


def normalize_batch(x: torch.Tensor, seq_len: torch.Tensor, normalize_type: str):
    if normalize_type == "per_feature":
        x_mean = torch.zeros((seq_len.shape[0], x.shape[1]), dtype=x.dtype, device=x.device)
        x_std = torch.zeros((seq_len.shape[0], x.shape[1]), dtype=x.dtype, device=x.device)
        for i in range(x.shape[0]):
            if x[i, :, : seq_len[i]].shape[1] == 1:
                raise ValueError("normalize_batch with `per_feature` normalize_type received a tensor of length 1.")
            x_mean[i, :] = x[i, :, : seq_len[i]].mean(dim=1)
            x_std[i, :] = x[i, :, : seq_len[i]].std(dim=1)
        x_std += CONSTANT
        return (x - x_mean.unsqueeze(2)) / x_std.unsqueeze(2), x_mean, x_std
    return x, None, None


class FilterbankFeatures(nn.Module):
    def __init__(self, n_window_stride: int = 2, nfilt: int = 8, n_fft: int = 8, normalize: str = "per_feature") -> None:
        super().__init__()
        self.hop_length = n_window_stride
        self.n_fft = n_fft
        self.normalize = normalize
        self.register_buffer("fb", torch.rand(nfilt, n_fft // 2 + 1))

    def get_seq_len(self, seq_len: torch.Tensor) -> torch.Tensor:
        return torch.floor_divide(seq_len, self.hop_length).to(dtype=torch.long) + 1

    def forward(self, x: torch.Tensor, seq_len: torch.Tensor):
        seq_len = self.get_seq_len(seq_len)
        frames = x.unfold(-1, self.n_fft, self.hop_length)  # [B, T, n_fft]
        spec = torch.fft.rfft(frames, dim=-1).abs().pow(2).transpose(1, 2)  # [B, n_fft//2+1, T]
        x = torch.log(self.fb @ spec + 2**-24)
        x = nn.functional.pad(x, (0, 1))
        if self.normalize:
            x, _, _ = normalize_batch(x, seq_len, normalize_type=self.normalize)
        return x, seq_len


class AudioToMelSpectrogramPreprocessor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.featurizer = FilterbankFeatures()

    @torch.no_grad()
    def forward(self, input_signal: torch.Tensor, length: torch.Tensor):
        return self.featurizer(input_signal, length)


def build() -> nn.Module:
    model = AudioToMelSpectrogramPreprocessor()
    return model.eval()


def step(model: nn.Module, i: int) -> None:
    lengths = torch.tensor([[32, 20], [28, 32], [32, 32], [16, 30], [32, 24], [22, 32], [32, 18], [26, 32]][i])
    model(torch.randn(2, 32), lengths)
