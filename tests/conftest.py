"""What every test gets: the working directory it started in (messages name files relative to it,
`examples/matvec.py:26`, so a test that moves elsewhere must not move the tests after it).

Tests that start a Dask cluster run last: its threads (not ours) live on in this process, which then
no longer forks workers (`ringproof.proofs.threads.alone`), so tests after them would run their pools
in-process, slower and with the parent's caches."""

import os

import pytest


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("dask") is not None)    # stable: order kept


@pytest.fixture(autouse=True)
def _same_working_directory():
    here = os.getcwd()
    yield
    os.chdir(here)
