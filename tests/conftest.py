"""Tests that start a Dask cluster run last: its threads (not ours) live on in this process, which then
no longer forks workers (`ringproof.proofs.threads.alone`), so tests after them would run their pools
in-process, slower and with the parent's caches."""


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("dask") is not None)    # stable: order kept
