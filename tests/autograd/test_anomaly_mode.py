"""Anomaly mode (Note [Anomaly mode]): the same switches, warnings, stacks and NaN errors as torch's."""

from __future__ import annotations

import os
import warnings

import pytest

import strided as st
import strided.cuda

torch = pytest.importorskip("torch")

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not strided.cuda.is_available(),
                                                                 reason="no CUDA device"))]


@pytest.fixture(autouse=True)
def _restore():
    yield
    st.set_anomaly_enabled(False)
    torch.set_anomaly_enabled(False)


def _run(lib, fn):
    """(error text or None, warning texts) of ``fn(lib)``, torch's "(Triggered internally ...)" tail cut."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(lib)
            err = None
        except RuntimeError as e:
            err = str(e)
    return err, [_user_frames(str(w.message).split(" (Triggered internally")[0]) for w in caught]


def _user_frames(text: str) -> str:
    """``text`` without the stack frames inside torch's package (torch 2.11 lists one more than 2.14)."""
    out, skip = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("  File "):
            skip = f"{os.sep}torch{os.sep}" in line
        elif not line.startswith("    "):
            skip = False
        if not skip:
            out.append(line)
    return "".join(out)


def _same(fn):
    ours, theirs = _run(st, fn), _run(torch, fn)
    assert ours[0] == (None if theirs[0] is None else theirs[0].replace("torch", "strided"))
    assert theirs[1] == ours[1]  # the stacks name this file's lines, "_run(torch, fn)" included
    return ours


def test_switches_as_torch():
    assert st.is_anomaly_enabled() is False and st.is_anomaly_check_nan_enabled() is True
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = st.autograd.detect_anomaly(check_nan=False)
    assert not st.is_anomaly_enabled()  # detect_anomaly acts on enter
    with mode:
        assert st.is_anomaly_enabled() and not st.is_anomaly_check_nan_enabled()
    assert not st.is_anomaly_enabled() and st.is_anomaly_check_nan_enabled()
    st.autograd.set_detect_anomaly(True)  # as a function: at once
    assert st.is_anomaly_enabled()
    with st.autograd.set_detect_anomaly(False):
        assert not st.is_anomaly_enabled()
    assert st.is_anomaly_enabled()


@pytest.mark.parametrize("args", [("x",), (True, "y"), (1,)])
def test_bad_switch_arguments_as_torch(args):
    with pytest.raises(TypeError) as ours:
        st.set_anomaly_enabled(*args)
    with pytest.raises(TypeError) as theirs:
        torch.set_anomaly_enabled(*args)
    assert str(ours.value) == str(theirs.value)


def _modified(lib, anomaly_forward, anomaly_backward):
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        with lib.autograd.set_detect_anomaly(anomaly_forward):
            b = a.exp()
        b.mul_(2)
        with lib.autograd.set_detect_anomaly(anomaly_backward):
            b.sum().backward()
    return fn


@pytest.mark.parametrize("forward,backward", [(False, False), (True, False), (False, True), (True, True)])
def test_modified_in_place_hint_and_warning_as_torch(forward, backward):
    err, warns = _same(_modified(None, forward, backward))
    assert "modified by an inplace operation" in err
    assert len(warns) == (1 if backward else 0)  # the failing node's stack, or that it has none


@pytest.mark.parametrize("device", DEVICES)
def test_nan_errors_name_the_node_and_output(device):
    def sqrt_of_negative(lib):
        with lib.autograd.detect_anomaly():
            x = lib.tensor([-1.0], requires_grad=True, device=device)
            x.sqrt().backward()

    def div_zero_by_zero(lib):  # the other operand's gradient (output 1) is the NaN one
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True, device=device)
            (x / x).sum().backward()

    err, warns = _same(sqrt_of_negative)
    assert err == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert warns[1].startswith("Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n")
    assert "x.sqrt().backward()" in warns[1]
    err, _ = _same(div_zero_by_zero)
    assert err == "Function 'DivBackward0' returned nan values in its 1th output."


def test_no_nan_check_without_check_nan_or_outside_the_mode():
    for mode in (st.autograd.set_detect_anomaly(True, check_nan=False), st.autograd.set_detect_anomaly(False)):
        with mode:
            x = st.tensor([-1.0], requires_grad=True)
            x.sqrt().backward()
        assert x.grad.isnan().all()


def test_custom_function_error_warns_with_the_forward_stack_as_torch():
    def fn(lib):
        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, grad):
                raise RuntimeError("Some error in backward")

        with lib.autograd.detect_anomaly():
            inp = lib.rand(4, requires_grad=True)
            out = MyFunc.apply(inp).sum()
            out.backward()

    err, warns = _same(fn)
    assert err == "Some error in backward"
    assert "out = MyFunc.apply(inp).sum()" in warns[1]


def test_stack_and_parent_kept_in_metadata_as_torch():
    for lib in (st, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                x = lib.tensor([0.5, 1.0], requires_grad=True)
                y = x.pow(1.5).sum()
                (g,) = lib.autograd.grad(y, x, create_graph=True)
        plain = (x * 2).grad_fn
        assert plain.metadata == {}  # made outside the mode
        assert sorted(g.grad_fn.metadata) == ["parent_", "traceback_"]
        assert g.grad_fn.metadata["parent_"].name() if lib is torch else g.grad_fn.metadata["parent_"].name
        stack = y.grad_fn.metadata["traceback_"]
        assert isinstance(stack, list) and "y = x.pow(1.5).sum()" in stack[-1]


def test_parent_stack_is_warned_after_the_failing_node_as_torch():
    def fn(lib):
        with lib.autograd.detect_anomaly():
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            y = x.sqrt().sum()
            (g,) = lib.autograd.grad(y, x, create_graph=True)  # 1 / (2 sqrt(0)) = inf: no NaN yet
            (g * 0).sum().backward()  # 0 * inf in the nodes the first backward made

    ours, theirs = _run(st, fn), _run(torch, fn)
    assert ours[0] == theirs[0] == "Function 'DivBackward0' returned nan values in its 1th output."
    assert len(ours[1]) == len(theirs[1]) == 3
    first = "Error detected in DivBackward0. Traceback of forward call that caused the error"
    assert ours[1][1].split(":")[0] == theirs[1][1].split(":")[0] == first
    assert "(g,) = lib.autograd.grad(y, x, create_graph=True)" in ours[1][1]
    assert ours[1][2] == theirs[1][2]  # the parent's (user-code) stack, line for line
    assert ours[1][2].startswith("\n\nPrevious calculation was induced by SqrtBackward0. ")


def test_off_by_default_costs_no_metadata():
    x = st.ones(2, requires_grad=True)
    assert (x * 3).grad_fn.metadata == {}
