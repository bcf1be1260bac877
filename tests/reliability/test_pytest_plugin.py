"""The pytest plugin, run through `pytester` on generated test suites that compile real models."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each case runs a pytest subprocess that imports torch and compiles

MODELS = '''
import torch
from torch import nn


class Counting(nn.Module):
    """The hazard: a Python-int counter in forward, so Dynamo recompiles on every call."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.lin(x) + self.calls


class Breaking(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        torch._dynamo.graph_break()
        return y.relu()


class Clean(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).relu()


class Net(nn.Module):
    def __init__(self, part):
        super().__init__()
        self.part = part

    def forward(self, x):
        return self.part(x)


def run(model, steps):
    with torch.no_grad():
        return [model(torch.ones(2, 4)) for _ in range(steps)]
'''


def contract(action: str = "alert", extra: str = "") -> str:
    return (
        f'[contract]\nname = "plugin"\n[defaults]\nbackend = "eager"\non_breach = "{action}"\n'
        f'[[region]]\nname = "part"\nmodule = "part"\n{extra}'
        '[[allow]]\ncode = "CC301"\nwhere = "*"\nreason = "the models recompile on purpose: the runtime budget is tested"\n'
    )


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(models=MODELS)
    pytester.makefile(
        ".toml",
        contract=contract(),
        fail_contract=contract("fail"),
        broken='[contract]\nname = "b"\n[[region]]\nname = "part"\nmodule = "nothing.here"\n',
    )
    return pytester


PASSING = """
import pytest
from models import Clean, Counting, Net, run
import monitor

@pytest.mark.compile_contract("contract.toml")
def test_clean(compile_contract):
    model = Net(Clean())
    mon = compile_contract(model)
    run(model, 5)
    assert mon.snapshot()["part"]["compiles"] == 1

@pytest.mark.compile_contract(path="fail_contract.toml")
def test_marker_beats_option(compile_contract):
    model = Net(Counting())
    compile_contract(model).mark_warm()
    compile_contract.expect_breach("part")
    with pytest.raises(monitor.RecompileBudgetExceeded) as err:
        run(model, 3)
    assert err.value.region == "part"

def test_option_names_the_contract(compile_contract):
    assert compile_contract.default_path.name == "contract.toml"
    model = Net(Clean())
    compile_contract(model)
    run(model, 2)

@pytest.mark.compile_contract("contract.toml")
def test_marker_without_the_fixture():
    pass
"""


def test_models_within_their_contract_pass_and_the_marker_overrides_the_option(suite) -> None:
    suite.makepyfile(test_passing=PASSING)
    result = suite.runpytest_subprocess(
        "-p", "no:cacheprovider", "--strict-markers", "-v", "--compile-contract", "contract.toml"
    )
    result.assert_outcomes(passed=4)


BREACHING = """
import pytest
from models import Breaking, Clean, Counting, Net, run

@pytest.mark.compile_contract("contract.toml")
def test_storm(compile_contract):
    model = Net(Counting())
    mon = compile_contract(model)
    run(model, 1)
    mon.mark_warm()
    run(model, 3)

@pytest.mark.compile_contract("contract.toml")
def test_breaks(compile_contract):
    model = Net(Breaking())
    compile_contract(model)
    run(model, 2)

@pytest.mark.compile_contract("fail_contract.toml")
def test_fail_action(compile_contract):
    model = Net(Counting())
    compile_contract(model).mark_warm()
    run(model, 4)

@pytest.mark.compile_contract("contract.toml")
def test_expected_breach_missing(compile_contract):
    model = Net(Clean())
    compile_contract(model)
    compile_contract.expect_breach("part")
    run(model, 2)

@pytest.mark.compile_contract("contract.toml")
def test_own_failure(compile_contract):
    model = Net(Counting())
    compile_contract(model).mark_warm()
    run(model, 3)
    assert False, "the user's own assertion"
"""


def test_budget_breaches_fail_the_test_with_the_region_and_the_reasons(suite) -> None:
    suite.makepyfile(test_breaching=BREACHING)
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(failed=5)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*_ test_storm _*",
            "*compile contract exceeded:*",
            "*region 'part': recompile budget exceeded (3 recompiles after warm-up > 0)*self.calls*",
            "*_ test_breaks _*",
            "*region 'part': graph break budget exceeded (a compile broke the graph more than 0 times*",
            "*_ test_fail_action _*",
            "*RecompileBudgetExceeded: region 'part' exceeded its recompile budget*",
            "*_ test_expected_breach_missing _*",
            "*compile contract: expected a budget breach in 'part', but the region stayed within its budgets*",
            "*_ test_own_failure _*",
            "*the user's own assertion*",
        ]
    )
    own = out[out.index("_ test_own_failure _") :]
    assert "compile contract exceeded" not in own.split("Captured", 1)[0]


REFUSED = """
import pytest
from models import Clean, Net

@pytest.mark.compile_contract("broken.toml")
def test_broken(compile_contract):
    compile_contract(Net(Clean()))

def test_none(compile_contract):
    compile_contract(Net(Clean()))

@pytest.mark.compile_contract("missing.toml")
def test_missing(compile_contract):
    compile_contract(Net(Clean()))

@pytest.mark.compile_contract()
def test_marker_without_path(compile_contract):
    pass
"""


def test_refused_contracts_and_missing_paths_fail_with_one_clear_message_and_no_traceback(suite) -> None:
    suite.makepyfile(test_refused=REFUSED)
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.compile_contract needs the contract path*",
            "*the model does not pass its contract*",
            "*region[[]0[]].module: CC501*",
            "*compile_contract: no contract; add @pytest.mark.compile_contract(path) or pass --compile-contract PATH*",
            "*missing.toml: no such contract file*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
