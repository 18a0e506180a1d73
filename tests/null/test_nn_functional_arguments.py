"""strided's Python-level forms -- nn.functional, fft, special -- check their Tensor arguments first, in torch's
binding words, rather than fail with an AttributeError deep inside."""

from __future__ import annotations

import re

import pytest

import strided as st
from strided.nn import functional as F


def test_functional_forms_name_themselves_when_given_a_non_tensor():
    # each was an AttributeError ("'str' object has no attribute 'dim'") before its argument check
    x = st.ones(2, 3)
    cases = [
        (lambda: F.softmax("s", 0), "softmax(): argument 'input' (position 1) must be Tensor, not str"),
        (lambda: F.dropout(None), "dropout(): argument 'input' (position 1) must be Tensor, not NoneType"),
        (lambda: F.layer_norm(x, (3,), "w"), "layer_norm(): argument 'weight' (position 3) must be Tensor, not str"),
        (lambda: F.mse_loss(x, "x"), "mse_loss(): argument 'target' (position 2) must be Tensor, not str"),
        (lambda: F.cross_entropy(x, None), "cross_entropy(): argument 'target' (position 2) must be Tensor"),
        (lambda: F.conv1d(x[None], None), "conv1d(): argument 'weight' (position 2) must be Tensor, not NoneType"),
        (lambda: F.triplet_margin_loss(x, x, "n"), "argument 'negative' (position 3) must be Tensor, not str"),
        (lambda: F.hardtanh([1.0]), "hardtanh(): argument 'input' (position 1) must be Tensor, not list"),
    ]
    for call, words in cases:
        with pytest.raises(TypeError, match=re.escape(words)):
            call()


def test_fft_and_special_forms_name_themselves_when_given_a_non_tensor():
    cases = [
        (lambda: st.fft.fft("s"), "fft_fft(): argument 'input' (position 1) must be Tensor, not str"),
        (lambda: st.fft.rfft2(None), "fft_rfft2(): argument 'input' (position 1) must be Tensor, not NoneType"),
        (lambda: st.fft.fftshift([1]), "fft_fftshift(): argument 'input' (position 1) must be Tensor, not list"),
        (lambda: st.special.erfcx("s"), "special_erfcx(): argument 'input' (position 1) must be Tensor, not str"),
        (lambda: st.special.round(None), "special_round(): argument 'input' (position 1) must be Tensor"),
    ]
    for call, words in cases:
        with pytest.raises(TypeError, match=re.escape(words)):
            call()
    assert st.fft.fft(input=st.ones(2)).tolist() == [2.0, 0.0]  # the keyword form still works
