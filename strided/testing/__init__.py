"""Test support shipped with strided: ``assert_close``, ``make_tensor``, the operator database and
device-parameterized helpers."""

from .assert_close import assert_close  # noqa: F401
from .creation import make_tensor  # noqa: F401
from .opinfo import ErrorInput, OpInfo, SampleInput, available_devices, make_arg, to_device  # noqa: F401
