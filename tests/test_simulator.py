"""The streaming ring simulator against the whole-trace checker it replaced (reference_machine.py):
the same cycles, op counts, output and violations (rule, message and iterations), with blocks small
enough that their boundaries fall inside phases and inside running sums."""

from __future__ import annotations

import io
import math

import pytest

from helpers import mutants
from helpers import mutants_algo2
from helpers import mutants_algo3
from helpers import mutants_general
from helpers.reference_machine import reference_run
from ringproof.model.ring import machine
from ringproof.model.ring.machine import run, simulate
from ringproof.model.ring.trace import Stream, build_trace
from ringproof.proofs.cli import main
from ringproof.schedules.algo1 import ALGO1, ALGO1_GENERAL, ALGO1_PRINTED
from ringproof.schedules.algo2 import ALGO2, ALGO2_GENERAL, ALGO2_PRINTED
from ringproof.schedules.algo3 import ALGO3, ALGO3_GENERAL, ALGO3_PRINTED

SIZES = [(n, m) for n in range(1, 25) for m in range(1, n + 1) if n % m == 0]
SMALL = [(n, m) for n, m in SIZES if n <= 16]
MUTANT_SIZES = [(2, 1), (4, 2), (5, 5), (6, 3), (8, 4), (9, 3), (12, 4)]
MUTANTS = {**mutants.REFUTED, **mutants.LEGAL, **mutants_algo2.REFUTED,
           **{name: s for name, (s, _) in mutants_algo3.REFUTED.items()},
           "algo1-printed": ALGO1_PRINTED, "algo2-printed": ALGO2_PRINTED, "algo3-printed": ALGO3_PRINTED}


def same_as_reference(schedule, n, m, d=None):
    """Run both; blocks of 2·min(n, d) − 1 cycles cut every row of n or d cycles (every sum of
    phases 1 and 2)."""
    want = reference_run(schedule, n, m, d=d)
    got = simulate(schedule, n, m, d=d, chunk=m * (2 * min(n, d or n) - 1))
    assert (got.cycles, got.ops, got.utilization) == (want.cycles, want.ops, want.utilization), (n, m, d)
    assert got.violations == want.violations, (n, m, d)
    if math.isinf(want.max_rel_error):
        assert math.isinf(got.max_rel_error), (n, m, d)
    else:
        assert abs(got.max_rel_error - want.max_rel_error) <= 1e-12, (n, m, d)
    return got


@pytest.mark.parametrize("schedule", [ALGO1, ALGO2, ALGO3], ids=lambda s: s.name)
def test_every_size_up_to_16_agrees_and_is_valid(schedule):
    for n, m in SMALL:
        assert same_as_reference(schedule, n, m).ok, (n, m)


@pytest.mark.slow
@pytest.mark.parametrize("schedule", [ALGO1, ALGO2, ALGO3], ids=lambda s: s.name)
def test_every_size_from_17_to_24_agrees_and_is_valid(schedule):
    """The sizes past `test_every_size_up_to_16_agrees_and_is_valid` (two thirds of its CPU at
    n ≤ 24, with the chunked sweep already crossing several chunks at n ≤ 16)."""
    for n, m in SIZES:
        if n > 16:
            assert same_as_reference(schedule, n, m).ok, (n, m)


@pytest.mark.parametrize("schedule", [ALGO1_GENERAL, ALGO2_GENERAL, ALGO3_GENERAL], ids=lambda s: s.name)
def test_general_schedules_agree_for_several_d(schedule):
    for n, m in [(4, 2), (6, 3), (8, 4), (12, 4), (12, 6)]:
        for d in (m, 2 * m, 3 * m):
            assert same_as_reference(schedule, n, m, d).ok, (n, m, d)


@pytest.mark.parametrize("name", list(MUTANTS) + list(mutants_general.MUTANTS))
def test_every_mutant_breaks_the_same_rules(name):
    schedule = MUTANTS.get(name) or mutants_general.MUTANTS[name]
    d = (lambda m: 3 * m) if name in mutants_general.MUTANTS else (lambda m: None)
    broken = [not same_as_reference(schedule, n, m, d(m)).ok for n, m in MUTANT_SIZES]
    assert any(broken) == (name not in mutants.LEGAL and "witness" not in name)   # else y is right


def test_a_sum_a_later_phase_still_adds_to_takes_two_passes(monkeypatch):
    """Division before the row sums: phase 2b reads s, which phase 2a only makes afterwards."""
    passes = []
    monkeypatch.setattr(machine._Machine, "_two_passes",
                        lambda self, two=machine._Machine._two_passes: passes.append(1) or two(self))
    r = same_as_reference(mutants.REFUTED["wrong phase order"], 6, 3)
    assert passes and any("s[" in v.message for v in r.violations)


def test_a_phase_copying_its_own_sums_is_read_again_for_those_copies(monkeypatch):
    """Algorithm 2's phase 1 stores w1[A, B] also as w1[B, A]: a copy is checked once the sum ends."""
    again = []
    visit = machine._Machine._visit

    def spy(self, k, sums, execute, slots):
        if isinstance(slots, set) and slots:
            again.append(slots)
        return visit(self, k, sums, execute, slots)

    monkeypatch.setattr(machine._Machine, "_visit", spy)
    assert same_as_reference(ALGO2, 8, 4).ok and again == [{"send"}]


def test_blocks_are_the_trace_cut_at_whole_cycles():
    for schedule, n, m, d in [(ALGO1, 6, 3, None), (ALGO3, 9, 3, None), (ALGO3_GENERAL, 6, 3, 9)]:
        trace = build_trace(schedule, n, m, d)
        stream = Stream(schedule, n, m, d, chunk=5 * m)
        assert stream.cycles == trace.cycles and stream.tuples == [pt.tuples for pt in trace.phases]
        for k, pt in enumerate(trace.phases):
            blocks = list(stream.blocks(k))
            assert all(b.size % m == 0 and b.size <= 5 * m for b in blocks)
            for field in ("cycle", "pe", "active", "target", "send", "sent", "stored", "moves"):
                assert (sum((list(getattr(b, field)) for b in blocks), []) == list(getattr(pt, field)))


def test_a_window_is_the_trace_of_its_cycles():
    trace = build_trace(ALGO3, 9, 3)
    cycles = [0, 5, trace.phases[2].start, trace.cycles - 1]
    window = Stream(ALGO3, 9, 3).window(cycles)
    for pt, whole in zip(window.phases, trace.phases):
        keep = [c in cycles for c in whole.cycle]
        assert list(pt.cycle) == list(whole.cycle[keep]) and list(pt.target) == list(whole.target[keep])
        assert (pt.start, pt.tuples) == (whole.start, whole.tuples)


def test_a_size_beyond_the_records_is_bad_input_naming_the_limit():
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", "algo1", "-n", "4096", "-m", "16"], out, err) == 64
    line = err.getvalue().strip()
    assert "\n" not in line and "GiB here" in line and "limited to 1.5 GiB" in line


def test_a_size_beyond_the_old_trace_limit_runs():
    r = run(ALGO1_GENERAL, 192, 16, d=16)
    assert r.ok and r.cycles == (2 * 192 * 192 * 16 + 2 * 192 * 192) // 16


def test_a_picture_beyond_the_old_trace_limit_reads_only_its_cycles(tmp_path):
    out = tmp_path / "big.svg"
    code = main(["simulate", "algo1-general", "-n", "192", "-d", "16", "-m", "16", "--picture", str(out),
                 "--cycles", "2"], io.StringIO(), io.StringIO())
    text = out.read_text()
    assert code == 0 and 'data-n="192"' in text and 'data-cycles="8"' in text and "failing" not in text
