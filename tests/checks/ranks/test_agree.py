"""The ranks' fingerprints compared: each differing component is one finding of its kind, naming the values and the
ranks that hold them (the majority's ranks first); declared per-rank components may differ."""

from __future__ import annotations

import json

from contract.checks.ranks.agree import differences


def region(**settings) -> str:
    return json.dumps({"module": "layers.*", "dynamic": "auto", **settings}, sort_keys=True)


def test_a_version_on_one_rank_is_cc804_naming_both_versions_and_the_odd_rank():
    groups = [({"version.torch": "2.13.0"}, [0, 1, 2]), ({"version.torch": "2.11.0"}, [3])]
    [f] = differences(groups, [], leader=0)
    assert (f.code, f.location, f.ranks) == ("CC804", "version.torch", "3")
    assert f.message == "ranks differ: ranks 0-2 have 2.13.0; rank 3 have 2.11.0"


def test_a_region_setting_is_cc803_showing_only_the_keys_that_differ():
    groups = [({"region.layers": region()}, [0]), ({"region.layers": region(dynamic=False)}, [1])]
    [f] = differences(groups, [], leader=0)
    assert f.code == "CC803" and "rank 1 have dynamic=false" in f.message and "module" not in f.message


def test_on_a_tie_the_leaders_value_is_the_reference():
    groups = [({"env.X": "a"}, [1]), ({"env.X": "b"}, [0])]
    [f] = differences(groups, [], leader=0)
    assert f.ranks == "1" and f.message.startswith("ranks differ: rank 0 have b")


def test_components_declared_per_rank_may_differ_and_identical_ranks_give_nothing():
    groups = [
        ({"cache.dir": "/a", "version.torch": "2.13.0"}, [0]),
        ({"cache.dir": "/b", "version.torch": "2.13.0"}, [1]),
    ]
    assert differences(groups, ["cache.*"], leader=0) == []
    assert differences([({"version.torch": "2.13.0"}, [0, 1])], [], leader=0) == []
