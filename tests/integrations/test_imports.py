"""The adapters are optional: `import contract` and the engine-free session never import an engine."""

from __future__ import annotations

import subprocess
import sys

from tests import ROOT


def test_contract_and_the_session_import_no_engine() -> None:
    """A fresh interpreter imports contract, monitor and the session without Lightning, transformers or accelerate."""
    code = (
        "import sys, contract, monitor, contract.integrations, contract.integrations.session\n"
        "print(sorted(m for m in ('lightning', 'pytorch_lightning', 'transformers', 'accelerate') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr
