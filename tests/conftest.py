"""What every test gets: the working directory it started in (messages name files relative to it,
`examples/matvec.py:26`, so a test that moves elsewhere must not move the tests after it).

Tests that start a Dask cluster run last: its threads (not ours) live on in this process, which then
no longer forks workers (`ringproof.proofs.threads.alone`), so tests after them would run their pools
in-process, slower and with the parent's caches. Under pytest-xdist's `--dist loadfile` the files
they live in (`DASK_FILES`, checked against the marker) are handed out after every other file, so
each runs last on its worker (xdist itself hands files out by test count, largest first).

Under pytest-xdist (README's test command: `-n auto --dist loadfile`, each file on one worker, so a
module's fixtures are built once) the cores are shared by the test workers, so a pool started with
the default `jobs=0` (one worker per core) gets only this worker's share of them: with two test
workers on two cores it runs its tasks in this process. A test that asks for workers (`jobs=2`)
still gets them, so the forked path keeps its own tests.

A test process collects cyclic garbage as seldom as `prove` does (`heap.collect_less`)."""

import os

import pytest


def pytest_configure(config):
    from ringproof.proofs.ring.heap import collect_less

    collect_less()      # as `prove` does: the collector's share of a test's CPU as of a command's
    test_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if test_workers > 1:
        from ringproof.proofs.ring import pool
        share = max(1, pool.workers(0) // test_workers)
        pool.workers = lambda jobs: jobs or share


DASK_FILES = ("tests/test_bitlevel_cubes.py",)


def pytest_collection_modifyitems(config, items):
    stray = [item.nodeid for item in items if item.get_closest_marker("dask") is not None
             and item.nodeid.split("::", 1)[0] not in DASK_FILES]
    if stray:
        raise pytest.UsageError(f"{stray[0]} is marked dask: list its file in tests/conftest.py's DASK_FILES")
    items.sort(key=lambda item: item.get_closest_marker("dask") is not None)    # stable: order kept


@pytest.hookimpl(optionalhook=True)     # a hook of pytest-xdist's: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with `DASK_FILES` handed out after every other file."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class DaskLast(LoadFileScheduling):
        def schedule(self):
            super().schedule()
            for scope in [s for s in self.workqueue if s in DASK_FILES]:
                self.workqueue.move_to_end(scope)

    return DaskLast(config, log)


@pytest.fixture(autouse=True)
def _same_working_directory():
    here = os.getcwd()
    yield
    os.chdir(here)
