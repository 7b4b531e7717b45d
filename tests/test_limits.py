"""Every command refuses a size beyond what its models hold before it starts work: one line, exit
64, the limit named; the estimates behind the limits never exceed what a run measures, so a size
refused would not have fitted."""

import time
import tracemalloc

import pytest

from helpers.cli import call, one_line_error


@pytest.mark.parametrize("argv, needle", [
    (["algo1", "--tier", "bounded", "--method", "bitlevel", "-n", "64", "-m", "2"], "limited to 1.5 GiB"),
    (["search", "masked", "-n", "1000", "-m", "2"], "limited to 1.5 GiB (about"),
    (["search", "plain", "-n", "12", "-m", "2"], "too large for the bit-level search"),
    (["balance", "--patches", "100000000"], "at most"),
])
def test_sizes_beyond_the_models_are_refused_at_once(argv, needle):
    start = time.perf_counter()
    code, out, err = call(*argv)
    assert code == 64 and out == "", err
    assert needle in one_line_error(err)
    assert time.perf_counter() - start < 10          # before any work (they ran for minutes, or were killed)


def test_op_count_is_the_problems():
    from ringproof.model.bitlevel.problem import BitProblem, op_count

    for variant in ("plain", "masked", "symmetric"):
        for n in (1, 2, 3, 5):
            for d in (None, 2, 7):
                assert op_count(variant, n, d) == len(BitProblem(variant, n, 1, d).ops)


def _peak(build) -> int:
    tracemalloc.start()
    try:
        build()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_estimates_stay_below_what_an_encoding_takes():
    from ringproof.model.bitlevel.problem import BitProblem, op_count
    from ringproof.proofs.cli.targets import resolve
    from ringproof.model.bitlevel.bridge import to_run
    from ringproof.proofs.search import limits
    from ringproof.proofs.search.cnf import Encoding, EncodingModes
    from ringproof.proofs.search.sat_check import _key

    prob = BitProblem("masked", 4, 2)
    T = sum(prob.phase_minimum())
    ops = op_count("masked", 4)
    assert limits.PER_SEARCH_SLOT * ops * 2 * T <= _peak(lambda: Encoding(prob, T, EncodingModes()))
    run = to_run(resolve("algo1"), 8, 2)
    fixed = ({_key(run.variant, o): (o.p, o.t) for o in run.ops}, {(s.t, s.p, s.datum) for s in run.sends})
    bp = BitProblem(run.variant, run.n, run.m, run.d, run.placement)
    peak = _peak(lambda: Encoding(bp, run.T, EncodingModes(fixed=fixed, barriers=run.barriers, compact=True)))
    assert limits.PER_RUN_SLOT * len(run.ops) * run.T <= peak


def test_sizes_within_the_limits_are_not_refused():
    from ringproof.proofs.search.limits import check_run_size, check_search

    check_search("symmetric", 6, 6)      # docs/es_tables.md's largest
    check_search("masked", 5, 5)
    check_run_size("plain", 15, 5)       # docs/bitlevel.md's bounded check
