"""Where the cubes run: in this process, or as Dask tasks on a local or remote cluster.

Dask (distributed) is the engine (docs/bitlevel.md §7 says why). A `LocalCluster` of worker processes
uses this machine's cores with no set-up; `cluster="tcp://host:8786"` connects to a running scheduler
instead. Dask re-runs a task whose worker died on another worker, so no cube is lost.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ringproof.errors import BadInput


class InProcess:
    """Tasks one after another in this process (one worker, or a single cube)."""

    workers = 1

    def imap(self, fn: Callable, args: list[tuple]) -> Iterator[tuple[int, object]]:
        for k, a in enumerate(args):
            yield k, fn(*a)

    def close(self) -> None:
        pass


class DaskEngine:
    """Tasks on a Dask cluster: `workers` local worker processes, or the scheduler at `address`."""

    def __init__(self, workers: int = 2, address: str | None = None):
        import dask
        from dask.distributed import Client, LocalCluster

        # solver calls with a time limit fork children, which daemonic worker processes may not
        dask.config.set({"distributed.worker.daemon": False, "distributed.scheduler.allowed-failures": 3})
        self._cluster = None
        if address is None:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                         dashboard_address=":0", silence_logs=50)
            self.client = Client(self._cluster)
        else:
            try:
                self.client = Client(address, timeout=15)
            except (OSError, ValueError, TypeError) as e:
                raise BadInput(f"search: cannot reach the Dask scheduler at {address!r} ({e})") from None
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})) or workers)

    def imap(self, fn: Callable, args: list[tuple]) -> Iterator[tuple[int, object]]:
        """(index, result) in the order the tasks finish; closing the iterator cancels the rest."""
        from dask.distributed import as_completed

        futures = [self.client.submit(fn, *a, pure=False) for a in args]
        index = {f.key: k for k, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                yield index[fut.key], fut.result()
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def engine(workers: int, address: str | None, tasks: int):
    """The engine for `tasks` tasks: Dask when a cluster is named or there is parallel work."""
    if address is None and (workers <= 1 or tasks <= 1):
        return InProcess()
    return DaskEngine(workers, address)
