"""Named index maps of real load balancers, for `prove layout --against NAME`."""

from __future__ import annotations

from ringproof.errors import BadInput
from ringproof.proofs.cp.load import load_callable


def torch_head_tail(seq_len: int, world_size: int):
    """PyTorch's context-parallel head-tail load balancer (`_HeadTailLoadBalancer` of
    torch.distributed.tensor.experimental._attention): its rearrange indices, on CPU, no process
    group needed."""
    from torch.distributed.tensor.experimental._attention import _HeadTailLoadBalancer

    return _HeadTailLoadBalancer(seq_len, world_size, "cpu")._generate_indices().reshape(-1).numpy()


LAYOUT_ADAPTERS = {"torch-head-tail": (torch_head_tail, "torch.distributed.tensor.experimental._attention")}


def index_map(spec: str):
    """The index map `--against` names: an adapter's name or MODULE:CALLABLE."""
    if spec in LAYOUT_ADAPTERS:
        fn, needs = LAYOUT_ADAPTERS[spec]
        try:
            __import__(needs)
        except Exception as err:
            raise BadInput(f"{spec} needs {needs} (PyTorch: pip install -e '.[torch]'): "
                           f"{type(err).__name__}: {err}") from None
        return fn
    if ":" not in spec:
        raise BadInput(f"--against {spec[:80]!r}: expected one of {', '.join(LAYOUT_ADAPTERS)} or MODULE:CALLABLE")
    return load_callable(spec, "--against")
