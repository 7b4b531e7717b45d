"""Device model: hops, latency, instance generation and instance files."""

import json
from fractions import Fraction

import pytest

from ringproof.model.device.instances import Device, generate, load
from ringproof.errors import BadInput


def test_hops_ring_and_line():
    ring, line = Device(4, (0, 1, 2, 3)), Device(4, (0, 1, 2, 3), topology="line")
    assert [ring.hops(0, c) for c in range(4)] == [0, 1, 2, 1]
    assert [line.hops(0, c) for c in range(4)] == [0, 1, 2, 3]
    assert ring.hops(3, 1) == ring.hops(1, 3) == 2


def test_latency_grows_with_hops():
    d = Device(3, (0, 1, 2), topology="line", base=Fraction(2), per_hop=Fraction(3))
    assert d.latency_matrix()[0] == (2, 5, 8)


def test_even_split_puts_contiguous_groups_near_each_bank():
    assert Device.even(4, 8).near == (0, 0, 1, 1, 2, 2, 3, 3)
    assert Device.even(3, 5).near == (0, 0, 1, 1, 2)


def test_generate_follows_skew_and_overlap():
    pure = generate(100, 4, 8, 0.7, 0.0)
    major = [row.index(1) for row in pure.shares]
    assert major == [0] * 70 + [1] * 10 + [2] * 10 + [3] * 10
    p = generate(100, 4, 8, 0.7, 0.2, seed=3)
    assert sum(1 for row in p.shares if max(row) < 1) == 20
    assert all(sum(row) == 1 for row in p.shares)
    assert generate(100, 4, 8, 0.7, 0.2, seed=3) == p
    assert generate(100, 4, 8, 0.7, 0.2, seed=4) != p


def test_line_straddles_stay_on_the_line():
    p = generate(40, 3, 3, 0.0, 1.0, seed=1, topology="line")
    for row in p.shares:
        banks = [b for b, s in enumerate(row) if s]
        assert len(banks) == 2 and abs(banks[0] - banks[1]) == 1


@pytest.mark.parametrize("kw, word", [
    (dict(patches=-1), "patches"), (dict(banks=0), "banks"), (dict(clusters=3), "clusters"),
    (dict(skew=1.2), "skew"), (dict(overlap=-0.1), "overlap"),
])
def test_generate_rejects_bad_parameters(kw, word):
    args = dict(patches=8, banks=4, clusters=8, skew=0.5, overlap=0.0) | kw
    with pytest.raises(BadInput, match=word):
        generate(**args)


def test_load_json(tmp_path):
    f = tmp_path / "i.json"
    f.write_text(json.dumps({"banks": 2, "near": [0, 1, 1], "topology": "line",
                             "patches": [[1, 0], ["1/4", "0.75"]]}))
    p = load(f)
    f.write_text(json.dumps({"near": [0, 1], "patches": [[1, 0]]}))
    assert load(f).banks == 2  # inferred from the rows
    assert p.near == (0, 1, 1) and p.shares[1] == (Fraction(1, 4), Fraction(3, 4))


def test_load_csv_with_header_and_overlap_column(tmp_path):
    f = tmp_path / "i.csv"
    f.write_text("H0,H1,overlap\n1,0,0\n0.5,0.5,1\n")
    p = load(f, clusters=4)
    assert p.banks == 2 and p.clusters == 4 and p.shares == ((1, 0), (Fraction(1, 2), Fraction(1, 2)))


@pytest.mark.parametrize("spec, word", [
    ({"banks": 2, "clusters": 2, "patches": [[0.5, 0.4]]}, "sum to 1"),
    ({"banks": 2, "clusters": 2, "patches": [[1.5, -0.5]]}, "sum to 1"),
    ({"banks": 2, "near": [0, 2], "patches": [[1, 0]]}, "near no bank"),
    ({"banks": 2, "near": [0, 0], "patches": [[1, 0]]}, "no near cluster"),
    ({"banks": 2, "clusters": 2, "patches": [[1]]}, "proportions"),
    ({"banks": 2, "clusters": 2, "patches": [["a", 1]]}, "must be a number"),
    ({"near": 3, "patches": [[1, 0]]}, "'near' must list"),
])
def test_load_rejects_bad_files(tmp_path, spec, word):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(spec))
    with pytest.raises(BadInput, match=word):
        load(f)


def test_load_rejects_missing_and_malformed_files(tmp_path):
    with pytest.raises(BadInput, match="cannot read"):
        load(tmp_path / "none.json")
    f = tmp_path / "x.json"
    f.write_text("{")
    with pytest.raises(BadInput, match="not valid JSON"):
        load(f)
