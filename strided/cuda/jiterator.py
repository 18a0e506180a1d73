"""``strided.cuda.jiterator``: elementwise CUDA kernels from a C++ function written in Python source, as torch's.

A code string holds a templated function for one element; the returned callable compiles it once per dtype
combination (NVRTC; memory and disk cache) and runs it over CUDA tensors with broadcasting, type promotion and any
strides (Note [Jiterator] in ``backends/cuda/jiterator.py``)::

    code = "template <typename T> T fma_like(T x, T y, T alpha) { return -x + alpha * y; }"
    fn = strided.cuda.jiterator._create_jit_fn(code, alpha=1.0)
    out = fn(a, b, alpha=3.14)

The function is called with the compute type as ``T`` (float for float16 / bfloat16 tensors); device math comes
from CUDA's built-ins (``::sin``, ``::exp``, ``::min``...), as in torch, with strided's ``Complex`` for complex
dtypes. The outputs do not record autograd history (torch's neither).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..backends.cuda import driver as _driver

__all__: list[str] = []

# torch's pattern (torch/cuda/jiterator.py): the greedy groups make the *last* function of the string the entry
_PATTERN = re.compile(r"\s*template\s*(?P<template_params>\<.+\>)\s*(?P<return_type>\w+)\s+(?P<function_name>\w+)"
                      r"\s*(?P<function_params>\(.+\))\s*(?P<function_body>\{.+\})\s*", re.DOTALL)


_ENGINE: list = []  # [backends.cuda.jiterator.run], imported on the first call (importing needs no GPU)


def _run():
    if not _ENGINE:
        from ..backends.cuda.jiterator import run

        _ENGINE.append(run)
    return _ENGINE[0]


class _CodeParser:
    """The entry function of a jiterator code string: its name, return type, parameters and body."""

    def __init__(self, code_string: str):
        if not isinstance(code_string, str):
            raise TypeError(f"jiterator: code_string must be a str, got {type(code_string).__name__}")
        result = _PATTERN.match(code_string)
        if result is None:
            raise Exception(f"Couldn't parse code, please check correctness:\n {code_string}")  # noqa: TRY002
        self.template_params = result["template_params"]
        self.return_type = result["return_type"]
        self.function_name = result["function_name"]
        self.function_params = result["function_params"]
        self.function_body = result["function_body"]


class _JittedFunction:
    """The callable ``_create_jit_fn`` returns: ``fn(*tensors, **extra_args)``."""

    def __init__(self, code_string: str, return_by_ref: bool, num_outputs: int, **kwargs):
        if not (return_by_ref or num_outputs == 1):
            raise AssertionError("Return by value only works for single output. ")
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, int) or not 1 <= num_outputs <= 8:
            raise ValueError(f"jiterator: num_outputs must be an int from 1 to 8, got {num_outputs!r}")
        self.code_string = code_string
        self.return_by_ref = return_by_ref
        self.num_outputs = num_outputs
        self.kernel_name = _CodeParser(code_string).function_name
        from ..backends.cuda.jiterator import extra_kind

        for name, value in kwargs.items():
            extra_kind(name, value)  # a TypeError now rather than at the first call
        self.kwargs_dict = kwargs

    def __repr__(self) -> str:
        return f"<jiterator function '{self.kernel_name}' ({self.num_outputs} output(s))>"

    def __call__(self, *tensors, **kwargs):
        if not _driver.is_available():
            raise AssertionError("Jiterator is only supported on CUDA and ROCm GPUs, none are available.")
        if len(tensors) > 8:
            raise AssertionError(f"jiterator only supports up to 8 tensor inputs, got {len(tensors)}")
        expanded = self.kwargs_dict
        if kwargs:
            expanded = dict(expanded)
            for key, value in kwargs.items():
                if key not in self.kwargs_dict:
                    raise KeyError(f"{key} is not declared in function definition")
                expanded[key] = value
        outs = _run()(self.code_string, self.kernel_name, self.num_outputs, self.return_by_ref, tensors, expanded)
        return outs[0] if self.num_outputs == 1 else tuple(outs)


def _create_jit_fn(code_string: str, **kwargs) -> Callable:
    """An elementwise CUDA function from ``code_string`` (a C++ function template returning one value); ``kwargs``
    declare the extra arguments, in order, with their defaults (torch.cuda.jiterator._create_jit_fn)."""
    return _JittedFunction(code_string, return_by_ref=False, num_outputs=1, **kwargs)


def _create_multi_output_jit_fn(code_string: str, num_outputs: int, **kwargs) -> Callable:
    """As ``_create_jit_fn`` for a function writing ``num_outputs`` results through ``T&`` parameters after the extra
    arguments; the call returns a tuple when ``num_outputs`` > 1 (torch.cuda.jiterator._create_multi_output_jit_fn)."""
    return _JittedFunction(code_string, return_by_ref=True, num_outputs=num_outputs, **kwargs)
