"""``vmap``: map a function over a dimension of its inputs (torch.func.vmap's API, by running the function once
per batch element).

Note [vmap by looping]
torch's vmap runs the function once on BatchedTensors, each op applying a batching rule; for ops without a
rule it falls back to a loop over the batch. strided has no batching rules, so the whole function takes
that fallback: it is called once per index of the mapped dimension, on the inputs' slices (views, so an
in-place write to a mapped input reaches the caller's tensor, as in torch), and each output is stacked
along its ``out_dims``. The results are torch's; the cost is B calls, not one. What a loop cannot tell from
torch's BatchedTensors: ``out_dims=None`` outputs are checked to be equal across the batch (torch refuses
any output computed from a mapped input even when its values agree), and code torch refuses under vmap
(``.item()``, data-dependent control flow) runs here. Randomness follows torch's modes: "error" refuses a
draw from a default generator (a draw from an explicit Generator is not seen), "same" restarts the default
generators for each element, "different" lets them run on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import random as _random
from ..ops import bound as ops
from ..tensor import Tensor
from .pytree import broadcast_prefix, is_node, tree_flatten, tree_spec

__all__ = ["vmap"]


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def _default_generators() -> list:
    return [_random.default_generator, *_random._CUDA_GENERATORS.values()]


def _fingerprint(g) -> bytes:
    return g.get_state().numpy().tobytes()


def _states() -> dict:
    return {id(g): (g, g.get_state(), _fingerprint(g)) for g in _default_generators()}


def _drew(before: dict) -> bool:
    """Whether a default generator advanced since ``before`` (one made meanwhile: since it was made)."""
    for g in _default_generators():
        old = before.get(id(g))
        if old is None:
            fresh = type(g)(g.device).manual_seed(g.initial_seed())
            if _fingerprint(g) != _fingerprint(fresh):
                return True
        elif _fingerprint(g) != old[2]:
            return True
    return False


def _restart(before: dict) -> None:
    for g in _default_generators():
        old = before.get(id(g))
        if old is None:  # made during the first element: back to its fresh state
            g.manual_seed(g.initial_seed())
        else:
            g.set_state(old[1])


def _in_dims_per_leaf(func, in_dims, args) -> list:
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        return [in_dims] * len(tree_flatten(args)[0])
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    dims = broadcast_prefix(in_dims, args)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_spec(in_dims)} but inputs has "
                         f"structure {tree_spec(args)}.")
    for d in dims:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims must be int or None "
                             f"for each input, got {d!r}")
    return dims


def _batch_size(func, in_dims, leaves, dims) -> int:
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                             f"but that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be mapped "
                         "(a Tensor with an int in_dim)")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
                         "for the mapped dimension")
    return sizes[0]


def _element(leaves, dims, i: int, empty: bool) -> list:
    out = []
    for x, d in zip(leaves, dims):
        if d is None:
            out.append(x)
        elif empty:  # a zero-size batch: one stand-in element gives the outputs' shapes
            shape = list(x.shape)
            del shape[d]
            out.append(x.new_zeros(shape))
        else:
            out.append(ops.select(x, d, i))
    return out


def _stack(func, results, out_dims, empty: bool):
    first = results[0]
    flat_first, build = tree_flatten(first)
    if isinstance(out_dims, int) and not isinstance(out_dims, bool):
        dims = [out_dims] * len(flat_first)
    elif is_node(out_dims):
        dims = broadcast_prefix(out_dims, first)
        if dims is None:
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                             f"with the structure of `outputs`. out_dims has structure {tree_spec(out_dims)} but "
                             f"outputs has structure {tree_spec(first)}.")
    elif out_dims is None:
        dims = [None] * len(flat_first)
    else:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): expected `out_dims` to be int or a tuple "
                         f"matching the structure of the outputs, got: {type(out_dims)}.")
    columns = [tree_flatten(r)[0] for r in results]
    out = []
    for k, (leaf, d) in enumerate(zip(flat_first, dims)):
        if d is None:
            if isinstance(leaf, Tensor) and not all(c[k].equal(leaf) for c in columns[1:]):
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                                 "out_dim is None")
            out.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
        n = leaf.dim() + 1
        if not -n <= d < n:
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): Got out_dim={d} for an output of "
                             f"dimensionality {n - 1}, so expected out_dim to satisfy -{n} <= out_dim < {n}.")
        if empty:
            shape = list(leaf.shape)
            shape.insert(d % n, 0)
            out.append(leaf.new_empty(shape))
        else:
            out.append(ops.stack([c[k] for c in columns], d))
    return build(out)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its inputs, outputs stacked along ``out_dims``
    (Note [vmap by looping]).

    ``in_dims`` is an int for every input, or a tuple with an int or None per positional argument (nested as
    the arguments are); ``out_dims`` likewise for the outputs. ``randomness`` is "error", "same" or "different";
    ``chunk_size`` is accepted for torch's API (a loop holds one element at a time anyway).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = _in_dims_per_leaf(func, in_dims, args)
        leaves, build = tree_flatten(args)
        size = _batch_size(func, in_dims, leaves, dims)
        empty = size == 0
        before = _states()
        results = []
        for i in range(max(size, 1)):
            if i and randomness == "same":
                _restart(before)
            results.append(func(*build(_element(leaves, dims, i, empty)), **kwargs))
            if randomness == "error" and _drew(before):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack(func, results, out_dims, empty)

    return wrapper
