"""torch.func's derivative transforms beyond ``grad``: ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``.

Each differentiates with respect to fresh aliases of its inputs (Note [grad without levels]) and returns
results in the structure torch.func gives: pytrees (tuples, lists, dicts) of tensors in, the same out.

Note [Forward transforms by reverse mode]
strided has no forward-mode AD. ``jvp`` takes J v by the double-backward trick (Note [Double-backward
trick] in autograd/functional.py): two backward passes, and the function's backward must itself be
differentiable. ``jacfwd`` computes the Jacobian by reverse mode, row by row as ``jacrev`` does: the values
and layout are torch's, the cost is a backward per output element instead of a forward per input element.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..ops import bound as ops
from ..tensor import Tensor
from .arguments import alias_input, wrap_argnums
from .pytree import tree_flatten, tree_map, tree_spec

__all__ = ["vjp", "jvp", "jacrev", "jacfwd", "hessian"]


def _needs_graph(leaves) -> bool:
    return is_grad_enabled() and any(isinstance(x, Tensor) and x._requires_grad for x in leaves)


def _unwrapper(keep_graph: bool):
    return lambda x: x if keep_graph or not isinstance(x, Tensor) else x.detach()


def _split_aux(output, has_aux: bool, api: str):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_outputs(flat, api: str) -> None:
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output and all outputs "
                               f"should be Tensors, got {type(o).__name__}")


def _vjps(outputs, inputs, cotangents) -> list:
    """Gradients of ``outputs`` (cotangents given) w.r.t. ``inputs``, zeros where unused, with a graph."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o._requires_grad]
    if not pairs:
        return [ops.zeros_like(x) for x in inputs]
    grads = autograd_grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], retain_graph=True,
                          create_graph=True, allow_unused=True)
    return [ops.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives one gradient per primal, as a tuple
    (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    flat_in, build_in = tree_flatten(primals)
    keep_graph = _needs_graph(flat_in)
    with enable_grad():
        aliases = [alias_input(x) for x in flat_in]
        output, aux = _split_aux(func(*build_in(aliases)), has_aux, "vjp(f, *primals)")
        flat_out, _ = tree_flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")
    unwrap = _unwrapper(keep_graph)

    def vjp_fn(cotangents):
        flat_ct, _ = tree_flatten(cotangents)
        if tree_spec(cotangents) != tree_spec(output):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {tree_spec(cotangents)}, primal output: "
                               f"{tree_spec(output)}")
        for i, (c, o) in enumerate(zip(flat_ct, flat_out)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: Expected cotangents to be Tensors, got {type(c).__name__}")
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] has "
                                   f"a shape of {o.shape}.")
        with enable_grad():
            grads = _vjps(flat_out, aliases, flat_ct)
        return tree_map(unwrap, build_in(grads))

    result = tree_map(unwrap, output)
    if has_aux:
        return result, vjp_fn, tree_map(unwrap, aux)
    return result, vjp_fn


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` (``(output, jvp_out, aux)`` with ``has_aux``); by the double-backward
    trick (Note [Forward transforms by reverse mode])."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if tree_spec(primals) != tree_spec(tangents):
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, if "
                           "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{tree_spec(primals)} and tangents with structure {tree_spec(tangents)}")
    if strict:
        raise RuntimeError(f"{api}: strict is not implemented (torch.func's neither)")
    flat_in, build_in = tree_flatten(primals)
    flat_tan, _ = tree_flatten(tangents)
    for p, t in zip(flat_in, flat_tan):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected primals and tangents to be Tensors")
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    keep_graph = _needs_graph(flat_in + flat_tan)
    with enable_grad():
        aliases = [alias_input(x) for x in flat_in]
        output, aux = _split_aux(func(*build_in(aliases)), has_aux, api)
        flat_out, build_out = tree_flatten(output)
        _check_outputs(flat_out, api)
        # an integer output (max's indices) has no tangent to carry: zeros of its dtype, as torch's
        wanted = [o.dtype.is_floating_point or o.dtype.is_complex for o in flat_out]
        diff_out = [o for o, w in zip(flat_out, wanted) if w]
        dummies = [ops.zeros_like(o).requires_grad_(True) for o in diff_out]
        grads = _vjps(diff_out, aliases, dummies)  # linear in the dummies (Note [Double-backward trick])
        pairs = [(g, t) for g, t in zip(grads, flat_tan) if g._requires_grad]
        if pairs:
            outs = iter(autograd_grad([p[0] for p in pairs], dummies, [p[1] for p in pairs], retain_graph=True,
                                      create_graph=keep_graph, allow_unused=True))
        else:
            outs = iter([None] * len(dummies))
        jvps = [(next(outs) if w else None) for w in wanted]
        jvps = [ops.zeros_like(o) if j is None else j for j, o in zip(jvps, flat_out)]
    unwrap = _unwrapper(keep_graph)
    result = (tree_map(unwrap, output), tree_map(unwrap, build_out(jvps)))
    return (*result, tree_map(unwrap, aux)) if has_aux else result


def _jacobian(func, argnums, has_aux, args, kwargs, api):
    argnums = wrap_argnums(argnums, len(args))
    positions = (argnums,) if isinstance(argnums, int) else argnums
    keep_graph = _needs_graph([x for i in positions for x in tree_flatten(args[i])[0]])
    with enable_grad():
        new_args = list(args)
        for i in positions:
            new_args[i] = tree_map(alias_input, args[i])
        wrt = new_args[argnums] if isinstance(argnums, int) else tuple(new_args[i] for i in argnums)
        flat_in, build_in = tree_flatten(wrt)
        output, aux = _split_aux(func(*new_args, **kwargs), has_aux, api)
        flat_out, build_out = tree_flatten(output)
        _check_outputs(flat_out, api)
        jacobians = []
        for o in flat_out:
            n = o.numel()
            if o._requires_grad and n:
                basis = ops.eye(n, n, dtype=o.dtype, device=o.device).reshape((n, *o.shape))
                rows = autograd_grad([o], flat_in, [basis], retain_graph=True, create_graph=True, allow_unused=True,
                                     is_grads_batched=True)
            else:
                rows = [None] * len(flat_in)
            per_input = [ops.zeros((*o.shape, *x.shape), dtype=x.dtype, device=x.device) if r is None
                         else r.reshape((*o.shape, *x.shape)) for r, x in zip(rows, flat_in)]
            jacobians.append(build_in(per_input))
    unwrap = _unwrapper(keep_graph)
    result = tree_map(unwrap, build_out(jacobians))
    return (result, tree_map(unwrap, aux)) if has_aux else result


def _check_chunk_size(chunk_size, api: str) -> None:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. the arguments ``argnums``, by reverse mode: for each
    output, a tensor (or the argument's pytree of them) of shape ``output.shape + input.shape``."""
    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, args, kwargs, "jacrev(f, argnums)(*args)")

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """torch.func's ``jacfwd``: the same Jacobian as :func:`jacrev`, computed by reverse mode
    (Note [Forward transforms by reverse mode])."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, args, kwargs, "jacfwd(f, argnums)(*args)")

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of the scalar ``func`` w.r.t. the arguments ``argnums``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)
