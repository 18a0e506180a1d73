"""Test support shipped with strided: the operator database and device-parameterized helpers."""

from .assert_close import assert_close  # noqa: F401
from .opinfo import OpInfo, SampleInput, ErrorInput, make_arg, available_devices, to_device  # noqa: F401
