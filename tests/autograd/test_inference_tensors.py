"""Inference tensors (Note [Inference tensors] in storage.py): what ``inference_mode`` makes, and what may be
done with it afterwards, as torch's."""

from __future__ import annotations

import pytest

import strided as st
import strided.cuda

torch = pytest.importorskip("torch")

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not strided.cuda.is_available(),
                                                                 reason="no CUDA device"))]


def _cases(lib, device):
    """name -> fn() for ``lib``; the tensors are made the same way for both libraries."""
    n = lib.ones(3, device=device)
    w = lib.ones(3, device=device, requires_grad=True)
    with lib.inference_mode():
        i = lib.ones(3, device=device)
        view_of_normal = n[0:2]
        in_mode = {
            "in mode: is_inference": i.is_inference(),
            "in mode: normal view": view_of_normal.is_inference(),
            "in mode: add_ on inference": bool(i.add_(1) is i),
            "in mode: add_ on normal": bool(n.add_(1) is n),
            "in mode: grad off": (w * 2).requires_grad,
        }
    with lib.inference_mode(), lib.inference_mode(False):
        nested = (lib.is_grad_enabled(), lib.is_inference_mode_enabled(), lib.ones(1).is_inference())
    cases = {k: (lambda v=v: v) for k, v in in_mode.items()}
    cases.update({
        "inference_mode(False) inside": lambda: nested,
        "is_inference": lambda: (i.is_inference(), n.is_inference(), lib.is_inference(i)),
        "views stay inference": lambda: (i[0:1].is_inference(), i.view(3, 1).is_inference(),
                                         i.detach().is_inference()),
        "results are normal": lambda: ((i + 1).is_inference(), i.clone().is_inference(), i.double().is_inference()),
        "read outside": lambda: (i * 2).sum().item(),
        "add_ outside": lambda: i.add_(1),
        "zero_ outside": lambda: i.zero_(),
        "setitem outside": lambda: i.__setitem__(0, 5.0),
        "out= outside": lambda: lib.add(n, 1, out=i),
        "copy_ from inference": lambda: n.copy_(i).is_inference(),
        "no_grad does not allow in-place": lambda: _in(lib.no_grad(), lambda: i.mul_(2)),
        "saved for backward": lambda: w * i,
        "not saved: add": lambda: (w + i).requires_grad,
        "requires_grad_": lambda: i.requires_grad_(),
        "requires_grad_(False)": lambda: i.requires_grad_(False).requires_grad,
        "version counter": lambda: i._version,
        # (torch's refused add(..., out=i) above has written i first: values after it are not compared)
        "view of normal made in mode, add_ outside": lambda: view_of_normal.add_(1).is_inference(),
    })
    return cases


def _in(ctx, fn):
    with ctx:
        return fn()


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("device", DEVICES)
def test_inference_tensors_as_torch(device):
    ours = {k: _outcome(f) for k, f in _cases(st, device).items()}
    theirs = {k: _outcome(f) for k, f in _cases(torch, "cpu").items()}  # torch's rules are the device's same
    for name in theirs:
        kind, value = theirs[name]
        if isinstance(value, str):
            value = value.replace("`torch.", "`strided.")
        assert ours[name] == (kind, value), name
