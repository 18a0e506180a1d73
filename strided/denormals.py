"""``strided.set_flush_denormal``: treat subnormal floats as zero in this thread's CPU arithmetic.

Note [Flush denormal through fenv]
torch sets the FTZ (flush-to-zero) and DAZ (denormals-are-zero) bits of the x86 MXCSR register, or the FZ bit of
the AArch64 FPCR, for the calling thread. strided's CPU kernels are NumPy's compiled loops running in the calling
thread, so the same bits change their results the same way. Python cannot write those registers itself, but
glibc's ``fegetenv`` / ``fesetenv`` read and write the whole floating-point environment, and ``fenv_t`` holds the
register at a fixed place: MXCSR at byte 28 of the 32-byte x86-64 ``fenv_t``, FPCR at byte 0 of the AArch64 one.
The bits are written, read back and checked; anything else (another C library or architecture, a failed call)
returns False and changes nothing, as torch does where the mode is unsupported. As in torch the mode belongs to
the calling thread: threads started afterwards (and BLAS's own threads) keep their own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

__all__ = ["set_flush_denormal"]

# (byte offset of the control register in fenv_t, the bits that flush denormals) per machine
_LAYOUTS = {
    "x86_64": (28, 0x8040),  # MXCSR: FTZ (bit 15) | DAZ (bit 6)
    "AMD64": (28, 0x8040),
    "aarch64": (0, 1 << 24),  # FPCR: FZ (bit 24)
    "arm64": (0, 1 << 24),
}
_FENV_BYTES = 64  # larger than fenv_t on either machine
_libm = None


def _fenv():
    """glibc's libm, or None where the layout above is not known to hold."""
    global _libm
    if _libm is None:
        _libm = False
        if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc" and platform.machine() in _LAYOUTS:
            name = ctypes.util.find_library("m")
            if name:
                try:
                    _libm = ctypes.CDLL(name)
                except OSError:
                    pass
    return _libm or None


def _control_word(libm, env) -> int:
    if libm.fegetenv(env) != 0:
        raise OSError("fegetenv failed")
    offset, _ = _LAYOUTS[platform.machine()]
    return ctypes.c_uint32.from_buffer(env, offset).value


def set_flush_denormal(mode: bool) -> bool:
    """Flush subnormal floats to zero (``mode=True``) or not, in this thread's CPU arithmetic.

    Returns True when the mode was set, False where the platform does not support it (Note [Flush denormal
    through fenv]). Like torch's, it affects the calling thread only.
    """
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    libm = _fenv()
    if libm is None:
        return False
    offset, bits = _LAYOUTS[platform.machine()]
    env = ctypes.create_string_buffer(_FENV_BYTES)
    try:
        word = _control_word(libm, env)
        want = word | bits if mode else word & ~bits
        if want != word:
            ctypes.c_uint32.from_buffer(env, offset).value = want
            if libm.fesetenv(env) != 0:
                return False
            return _control_word(libm, ctypes.create_string_buffer(_FENV_BYTES)) & bits == (bits if mode else 0)
    except OSError:
        return False
    return True
