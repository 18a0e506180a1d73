"""Higher-level autograd on functions: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

torch.autograd.functional rebuilt on ``strided.autograd.grad``: the same argument checks, error
words, input/output structure (a Tensor or a tuple of Tensors in, the same shape out; a Jacobian of
tuples is a tuple of tuples) and ``create_graph`` / ``strict`` semantics as torch's module, which
this one follows function by function.
"""

from __future__ import annotations

from ..factories import zeros_like
from ..ops import bound as ops
from ..tensor import Tensor
from .backward_api import grad as autograd_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --- structure helpers -------------------------------------------------------------------------

def _as_tuple(inp, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, raising torch's TypeError for a non-Tensor entry."""
    is_inp_tuple = isinstance(inp, tuple)
    if not is_inp_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_inp_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but {where} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: unwrap the levels (outputs, inputs) that were single Tensors."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


# Note [Functional input preprocessing]
# As torch: with create_graph=True an input that already requires grad is replaced by a view of
# itself, so the results stay connected to the caller's graph (a second-order grad through them
# reaches the caller's leaves); otherwise it is detached and made a fresh leaf, so the user's graph
# is never extended and results do not require grad.
def _grad_preprocess(inputs, create_graph, need_graph) -> tuple:
    res = []
    for inp in inputs:
        if create_graph and inp._requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_STRICT_MESSAGES = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be computed "
                "in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(inputs, input_type, strict) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp._requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False) -> tuple:
    """``autograd.grad`` over the outputs that require grad; all None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True,
                         create_graph=create_graph, retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_FILL_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                   "using the double backward trick to compute forward mode gradients. This is not allowed in "
                   "strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                    "in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                          "backward trick to replace forward mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage) -> tuple:
    """Replace the None gradients by zeros shaped like ``refs`` (an error in strict mode)."""
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i._requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _prepare_v(v, others, is_others_tuple, create_graph, fn_name, what) -> tuple | None:
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, others, is_others_tuple)
        return v
    if len(others) != 1 or others[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single element.")
    return None


# --- vector products ---------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs`` (torch's vjp)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", "user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


# Note [Double-backward trick]
# strided has no forward-mode AD, and neither did torch when it wrote ``jvp``: J v is computed as
# the gradient of u -> (u^T J) = grad(outputs, inputs, u, create_graph=True), which is linear in u,
# with respect to u, contracted with v. The dummy u (zeros that require grad) never affects the
# value; it only has to be a graph leaf. Two backward passes instead of one forward pass, and it
# needs the function's backward to be differentiable (no ``once_differentiable`` Functions).
def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product of ``func`` at ``inputs`` (torch's jvp)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", "input to the user-provided function is")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func`` (torch's vhp)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick (torch's hvp)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, name):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, name, "input to the user-provided function is")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
        _check_requires_grad(outputs, "outputs", strict=strict)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        if name == "hvp":  # H is symmetric: H v = (v^T H)^T, taken by the trick (Note [Double-backward trick])
            grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        if name == "hvp":
            grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
            res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
        else:
            grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
            res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


# --- Jacobian and Hessian ----------------------------------------------------------------------

def _construct_standard_basis_for(tensors, tensor_numels) -> tuple:
    """One ``(sum(numels), numel_i)`` chunk per tensor; stacked side by side they are the identity."""
    total_numel = sum(tensor_numels)
    chunks = tuple(t.new_zeros(total_numel, n) for t, n in zip(tensors, tensor_numels))
    diag_start_idx = 0
    for chunk, numel in zip(chunks, tensor_numels):
        chunk.diagonal(diag_start_idx).fill_(1)
        diag_start_idx -= numel
    return chunks


# Note [Forward-mode Jacobian]
# torch's strategy="forward-mode" pushes the standard basis of the inputs through forward-mode AD
# under vmap. strided has no forward AD, so it takes the same J e_k columns by the double-backward trick
# (Note [Double-backward trick]): one forward and one first backward with create_graph, then a
# batched second backward over the basis (``is_grads_batched``, one engine run per column). The
# values and layout are torch's; the cost is a backward per input element, not one vmapped pass.
# As in torch, where forward AD over ops on inputs that require grad records their backward, the
# result stays connected to the caller's inputs that require grad (a graph although
# create_graph=False); torch's forward-mode hessian of inputs that do not require grad returns
# tensors that require grad (through internal duals nobody can reach), this one returns detached ones.
def _jacfwd(func, inputs, strict=False, vectorize=False):
    if strict:
        raise RuntimeError("strided.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are "
                           "not supported together (yet). Please either set `strict=False` or "
                           "`strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    keep_graph = any(inp._requires_grad for inp in inputs)
    with enable_grad():
        inputs = _grad_preprocess(inputs, create_graph=True, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
    input_numels = tuple(inp.numel() for inp in inputs)
    tangents = tuple(t.view((-1, *inp.shape)) for t, inp in
                     zip(_construct_standard_basis_for(inputs, input_numels), inputs))
    with set_grad_enabled(keep_graph or is_grad_enabled()):
        jvps = _autograd_grad(grad_inputs, grad_outputs, tangents, create_graph=keep_graph, is_grads_batched=True)
    jacobian_output_input = []
    for jac_i, out_i in zip(jvps, outputs):
        if jac_i is None:
            jac_i = zeros_like(out_i).expand((sum(input_numels), *out_i.shape))
        row = []
        for jac, inp_j in zip(jac_i.split(input_numels, 0), inputs):
            row.append(jac.permute(*range(1, jac.dim()), 0).reshape((*out_i.shape, *inp_j.shape)))
        jacobian_output_input.append(row if keep_graph else [r.detach() for r in row])
    # lists, not tuples, where both levels are tuples: torch's forward-mode returns exactly that
    return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (torch's jacobian).

    Entry ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``; single-Tensor levels are
    unwrapped. ``vectorize=True`` takes the rows through one batched ``grad`` (Note [Batched
    gradients]); ``strategy="forward-mode"`` needs it (Note [Forward-mode Jacobian]).
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("strided.autograd.functional.jacobian: `create_graph=True` and "
                                      "`strategy=\"forward-mode\"` are not supported together (yet). Please either "
                                      "set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError("strided.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                                   "supported together. Please either set `strict=False` or `vectorize=False`.")
            jacobian_output_input = _jacobian_vectorized(inputs, outputs, create_graph)
        else:
            jacobian_output_input = _jacobian_rows(inputs, outputs, create_graph, strict)
        jacobian_output_input = _grad_postprocess(jacobian_output_input, create_graph)
        return _tuple_postprocess(jacobian_output_input, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_vectorized(inputs, outputs, create_graph) -> tuple:
    output_numels = tuple(out.numel() for out in outputs)
    grad_outputs = _construct_standard_basis_for(outputs, output_numels)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph, is_grads_batched=True))
    for idx, vj_el in enumerate(vj):
        if vj_el is None:
            vj[idx] = zeros_like(inputs[idx]).expand((sum(output_numels), *inputs[idx].shape))
    jacobian_input_output = []
    for jac_input_i, input_i in zip(vj, inputs):
        jacobian_input_output.append([jac.reshape((*output_j.shape, *input_i.shape))
                                      for jac, output_j in zip(jac_input_i.split(output_numels, 0), outputs)])
    return tuple(tuple(row) for row in zip(*jacobian_input_output))


def _jacobian_rows(inputs, outputs, create_graph, strict) -> tuple:
    jacobian_output_input = []
    for i, out in enumerate(outputs):
        jac_i = tuple([] for _ in inputs)
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                if vj_el is not None:
                    if strict and create_graph and not vj_el._requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    jac_i_el.append(vj_el)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                           f"{el_idx}. This is not allowed in strict mode.")
                    jac_i_el.append(zeros_like(inp_el))
        jacobian_output_input.append(tuple(
            ops.stack(jac_i_el, 0).view(out.size() + inputs[el_idx].size()) for el_idx, jac_i_el in enumerate(jac_i)))
    return tuple(jacobian_output_input)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: the Jacobian of its gradient (torch's hessian).

    For tuple inputs entry ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))
