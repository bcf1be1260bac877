"""Real Hugging Face decoders (tiny configs, no weights downloaded) pass the hot-path checks with zero findings: dense,
MoE with shared experts, latent attention and parallel-attention blocks, compiled per layer and whole."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from contract.pipeline import check
from tests.checks import hf_models

CASES = [(name, glob) for name, glob in sorted(hf_models.LAYERS.items()) for glob in (glob, "")]


def write_contract(tmp_path: Path, name: str, glob: str, *, probe: bool) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'[contract]\nname = "hf-{name}"\nmodel = "tests.checks.hf_models:{name}"\n'
        f'step = "tests.checks.hf_models:step"\n\n[defaults]\nbackend = "eager"\n\n'
        f'[[region]]\nname = "layers"\nmodule = "{glob}"\n\n[probe]\nsteps = 4\nenabled = {str(probe).lower()}\n'
    )
    return path


def test_the_set_covers_eight_architectures_including_moe_latent_attention_and_parallel_blocks() -> None:
    assert len(hf_models.LAYERS) >= 8
    assert {"qwen2_moe", "deepseek_v3", "gpt_neox", "falcon"} <= set(hf_models.LAYERS)


@pytest.mark.parametrize(("name", "glob"), CASES, ids=lambda v: v or "whole")
def test_hf_decoder_has_no_static_findings_with_or_without_the_step(name: str, glob: str, tmp_path: Path) -> None:
    model = getattr(hf_models, name)()
    contract = write_contract(tmp_path, name, glob, probe=False)
    _, binding, findings = check(contract, model)
    assert binding is not None and len(binding.targets()) == (2 if glob else 1)
    assert findings == [], [str(f) for f in findings]
    _, _, findings = check(contract, model, step=hf_models.step)
    assert findings == [], [str(f) for f in findings]


@pytest.mark.parametrize(("name", "glob"), CASES, ids=lambda v: v or "whole")
def test_hf_decoder_has_no_findings_with_the_probe(name: str, glob: str, tmp_path: Path) -> None:
    model = getattr(hf_models, name)()
    _, _, findings = check(write_contract(tmp_path, name, glob, probe=True), model, step=hf_models.step)
    assert findings == [], [str(f) for f in findings]
