"""Stay hints of the non-causal backward ring `ring-attention-bwd` for the tests: the registered
ones (`context_parallel.BACKWARD_STAYS`) without "on_request", so that `held` derives them."""

from ringproof.schedules.context_parallel import BACKWARD_STAYS as STAYS  # noqa: F401
