"""The forked task runner: results in task order, closures reach workers, errors come back; a task
beside the caller's work comes back the same way, its error first."""

import os
import threading

import pytest

from ringproof.errors import BadInput, InternalError
from ringproof.proofs.ring.pool import beside, run_all


def test_results_in_task_order_from_unpicklable_closures():
    local = {i: (lambda i=i: i * i) for i in range(7)}          # lambdas cannot be pickled
    assert run_all([local[i] for i in range(7)], jobs=2) == [i * i for i in range(7)]


def test_a_task_error_is_raised_in_the_parent_with_its_type():
    def bad():
        raise BadInput("no such schedule")
    with pytest.raises(BadInput, match="no such schedule"):
        run_all([lambda: 1, bad, lambda: 2], jobs=2)


def test_a_result_that_cannot_be_pickled_is_an_internal_error_naming_the_cause():
    if threading.active_count() > 1:      # run_all then runs the tasks in this process: nothing is pickled
        pytest.skip("a library's thread from an earlier test runs (Dask's): this process forks no more")
    with pytest.raises(InternalError, match=r"task 1's result cannot be sent back .*(?i:pickle)"):
        run_all([lambda: 1, lambda: (lambda: 2), lambda: 3], jobs=2)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_task_beside_gives_its_result_from_a_worker_where_two_may_run(jobs):
    """With one job, or while another thread runs (an earlier test's, which may end meanwhile:
    looked at before and after), here; else in a forked worker."""
    threads = threading.active_count() > 1
    with beside(os.getpid, jobs) as wait:
        pid = wait()
    threads = threads or threading.active_count() > 1
    if jobs == 1 or not threads:
        assert (pid == os.getpid()) == (jobs == 1)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_error_of_a_task_beside_comes_before_the_callers(jobs):
    def bad():
        raise BadInput("the steps differ on ints")
    with pytest.raises(BadInput, match="the steps differ on ints"):
        with beside(bad, jobs):
            raise InternalError("the caller's own, met later")
    with pytest.raises(BadInput, match="the steps differ on ints"):
        with beside(bad, jobs) as wait:
            wait()
    with pytest.raises(InternalError, match="the caller's own"):       # the task passed: the caller's
        with beside(lambda: None, jobs):
            raise InternalError("the caller's own")
