"""Real Hugging Face decoders (tiny configs, no weights downloaded) pass the hot-path checks with zero findings."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from contract.pipeline import check
from tests.checks import hf_models

MODELS = {"llama": "model.layers.*", "qwen2": "model.layers.*", "mixtral": "model.layers.*", "gpt2": "transformer.h.*"}


def write_contract(tmp_path: Path, name: str, glob: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'[contract]\nname = "hf-{name}"\nmodel = "tests.checks.hf_models:{name}"\n'
        f'step = "tests.checks.hf_models:step"\n\n[defaults]\nbackend = "eager"\n\n'
        f'[[region]]\nname = "layers"\nmodule = "{glob}"\n\n[probe]\nsteps = 4\n'
    )
    return path


@pytest.mark.parametrize("name", sorted(MODELS))
def test_hf_decoder_layers_have_no_static_findings(name: str, tmp_path: Path) -> None:
    model = getattr(hf_models, name)()
    _, binding, findings = check(write_contract(tmp_path, name, MODELS[name]), model)
    assert binding is not None and len(binding.targets()) == 2
    assert findings == [], [str(f) for f in findings]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_hf_decoder_layers_have_no_findings_with_the_probe(name: str, tmp_path: Path) -> None:
    model = getattr(hf_models, name)()
    _, _, findings = check(write_contract(tmp_path, name, MODELS[name]), model, step=hf_models.step)
    assert findings == [], [str(f) for f in findings]
