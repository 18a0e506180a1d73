"""strided.library.Library(ns, "IMPL").impl over an existing kernel (Note [Kernel overrides]): the override serves
calls (autograd's too) while its library lives and is undone by ``_destroy()`` or garbage collection, several
libraries stack and unstack in any order, and torch's refusals."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import strided as st
from strided.dispatch.library import _OVERRIDES


def _sub_instead(self, other, alpha=1):
    return st.ops.aten.sub.Tensor(self, other, alpha=alpha)


def _times_ten(self, other, alpha=1):
    return st.ops.aten.mul.Tensor(self, other) * 10


def _add():
    return (st.ones(3) * 2 + st.ones(3)).tolist()


def test_an_override_serves_calls_until_destroyed():
    assert _add() == [3.0, 3.0, 3.0]
    lib = st.library.Library("aten", "IMPL")
    try:
        lib.impl("add.Tensor", _sub_instead, "CPU")
        assert _add() == [1.0, 1.0, 1.0]
        assert st.ops.aten.add.Tensor(st.ones(2), st.ones(2)).tolist() == [0.0, 0.0]
    finally:
        lib._destroy()
    assert _add() == [3.0, 3.0, 3.0] and not _OVERRIDES
    lib._destroy()  # twice: nothing left to undo
    with pytest.raises(RuntimeError, match=r"impl\(\) after _destroy\(\)"):
        lib.impl("add.Tensor", _sub_instead, "CPU")


def test_garbage_collection_undoes_it_as_torchs():
    lib = st.library.Library("aten", "IMPL")
    lib.impl("add.Tensor", _sub_instead, "CPU")
    assert _add() == [1.0, 1.0, 1.0]
    del lib
    gc.collect()
    assert _add() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("first_destroyed", ["older", "newer"])
def test_libraries_stack_and_unstack_in_any_order(first_destroyed):
    older, newer = st.library.Library("aten", "IMPL"), st.library.Library("aten", "IMPL")
    try:
        older.impl("add.Tensor", _sub_instead, "CPU")
        newer.impl(st.ops.aten.add.Tensor, _times_ten, "CPU")  # an OpOverload names it too
        assert _add() == [20.0, 20.0, 20.0]  # the newest wins
        (older if first_destroyed == "older" else newer)._destroy()
        assert _add() == ([20.0] * 3 if first_destroyed == "older" else [1.0] * 3)
    finally:
        older._destroy()
        newer._destroy()
    assert _add() == [3.0, 3.0, 3.0]


def test_autograd_runs_the_override_below_it():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    lib = st.library.Library("aten", "IMPL")
    try:
        lib.impl("mul.Tensor", lambda a, b: st.ops.aten.add.Tensor(a, b), "CPU")
        y = x * x  # the value is the override's; the node stays MulBackward0, as in torch
        assert type(y.grad_fn).__name__ == "MulBackward0"
        np.testing.assert_array_equal(y.detach().numpy(), [2.0, 4.0])
        y.sum().backward()  # mul's formula (grad * other + grad * self), whose muls are the override too: torch's
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0])  # [4, 6] (the same code under torch)
    finally:
        lib._destroy()
    np.testing.assert_array_equal((x * x).detach().numpy(), [1.0, 4.0])


def test_a_kernel_where_there_was_none_goes_away_again():
    ns = "override_lib_test"
    defs = st.library.Library(ns, "DEF")
    defs.define("twice(Tensor self) -> Tensor")
    x = st.ones(2)
    with pytest.raises(NotImplementedError):
        st.ops.override_lib_test.twice(x)
    lib = st.library.Library(ns, "IMPL", "CPU")  # the library's key serves impl calls without one
    lib.impl("twice", lambda t: t * 2)
    assert st.ops.override_lib_test.twice(x).tolist() == [2.0, 2.0]
    lib._destroy()
    with pytest.raises(NotImplementedError):
        st.ops.override_lib_test.twice(x)


def test_refusals_are_torchs():
    with pytest.raises(ValueError, match="aten is a reserved namespace. Please try creating a library with another"):
        st.library.Library("aten", "DEF")
    with pytest.raises(ValueError, match="Unsupported kind: IMPLEMENT"):
        st.library.Library("aten", "IMPLEMENT")
    lib = st.library.Library("aten", "IMPL")
    try:
        with pytest.raises(TypeError, match="Input function is required to be a callable but found type"):
            lib.impl("add.Tensor", 3, "CPU")
        lib.impl("add.Tensor", _sub_instead, "CPU")
        with pytest.raises(RuntimeError, match="already a kernel registered from python overriding add.Tensor's "
                                               "behavior for CPU dispatch key and aten namespace"):
            st.library.Library("aten", "IMPL").impl("add.Tensor", _times_ten, "CPU", allow_override=False)
    finally:
        lib._destroy()


def test_kernels_get_torchs_normal_form_of_the_arguments():
    """Note [Python kernel arguments]: the forms torch's ``parseIValuesToPyArgsKwargs`` gives a Python kernel."""
    seen = []

    def record(*args, **kwargs):
        seen.append((len(args), [a for a in args[1:] if not isinstance(a, st.Tensor)], kwargs))
        return args[0].clone()

    x = st.ones(3)
    lib = st.library.Library("aten", "IMPL")
    try:
        lib.impl("gelu", record, "CPU")
        lib.impl("add.Tensor", record, "CPU")
        lib.impl("sum.dim_IntList", record, "CPU")
        st.nn.functional.gelu(x)  # approximate='none' is gelu's default: not passed
        st.nn.GELU(approximate="tanh")(x)
        st.add(x, x, alpha=1.0)  # not alpha's default: an int 1 is not a float 1.0 among torch's IValues
        st.add(x, x)
        x.add(x, alpha=2)
        x.sum(dim=0, keepdim=False)  # a keyword-given positional argument by position, an int as int[1]'s list
        x.sum(0, True)
    finally:
        lib._destroy()
    assert seen == [(1, [], {}), (1, [], {"approximate": "tanh"}), (2, [], {"alpha": 1.0}), (2, [], {}),
                    (2, [], {"alpha": 2}), (2, [[0]], {}), (3, [[0], True], {})]
