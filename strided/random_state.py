"""Generator states as torch lays them out, so that ``get_rng_state()`` tensors pass between strided and torch and
into safetensors checkpoints.

Note [Generator state bytes]
A CPU state is torch's ``CPUGeneratorImplState``: the legacy ``THGeneratorState`` (initial seed, mt19937's
``left`` / ``seeded`` / ``next``, its 624 words each in a uint64, three doubles of which ``normal_y`` holds the
cached Box-Muller sine and ``normal_is_valid`` says so) and the float cache torch's CPU kernels no longer fill:
5056 bytes (5048 for the legacy layout, also accepted). NumPy's MT19937 position ``pos`` (words consumed of the
block) is torch's ``next``; torch's ``left`` counts down from 625 - pos. A CUDA state is torch's 16 bytes: the
Philox seed and offset. Both as uint8 CPU tensors; ``set_state`` checks them in torch's words.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["CPU_STATE", "get_state", "set_state"]

CPU_STATE = np.dtype([("the_initial_seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                      ("state", "<u8", (624,)), ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"),
                      ("normal_is_valid", "<i4"), ("pad", "V4"), ("next_float_normal_sample", "<f4"),
                      ("is_next_float_normal_sample_valid", "u1"), ("pad2", "V3")])
_LEGACY_SIZE = 5048
_CUDA = struct.Struct("<QQ")


def get_state(gen):
    """``gen``'s state as torch's uint8 CPU tensor."""
    from .tensor_data import from_numpy

    if gen.device.type == "cuda":
        return from_numpy(np.frombuffer(_CUDA.pack(gen._seed, gen.philox_offset), np.uint8).copy())
    rec = np.zeros((), CPU_STATE)
    engine = gen._mt.state["state"]
    pos = int(engine["pos"])
    rec["the_initial_seed"] = gen._seed
    rec["left"] = 625 - pos
    rec["seeded"] = 1
    rec["next"] = pos % 624
    rec["state"] = engine["key"].astype(np.uint64)
    if gen.next_double_normal is not None:
        rec["normal_y"] = gen.next_double_normal
        rec["normal_is_valid"] = 1
    return from_numpy(np.frombuffer(rec.tobytes(), np.uint8).copy())


def set_state(gen, new_state) -> None:
    """Restore ``gen`` from a state :func:`get_state` (or torch) made."""
    from . import dtypes as dt
    from .tensor import Tensor

    if not (isinstance(new_state, Tensor) and new_state.dtype is dt.uint8 and new_state.device.type == "cpu"):
        raise TypeError("RNG state must be a torch.ByteTensor")
    raw = new_state.contiguous().numpy().tobytes()
    if gen.device.type == "cuda":
        if len(raw) not in (_CUDA.size, _CUDA.size - 8):
            raise RuntimeError("RNG state is wrong size")
        seed, offset = _CUDA.unpack(raw) if len(raw) == _CUDA.size else (struct.unpack("<Q", raw)[0], 0)
        gen.manual_seed(seed)
        gen.philox_offset = offset
        return
    if len(raw) not in (CPU_STATE.itemsize, _LEGACY_SIZE):
        raise RuntimeError(f"Expected either a THGeneratorState of size {_LEGACY_SIZE} or a CPUGeneratorImplState of "
                           f"size {CPU_STATE.itemsize} but found the input RNG state size to be {len(raw)}")
    rec = np.frombuffer(raw.ljust(CPU_STATE.itemsize, b"\0"), CPU_STATE)[0]
    cached = None
    if rec["normal_is_valid"]:
        if len(raw) == _LEGACY_SIZE:  # the legacy layout kept the pair's rho and x: its sine
            cached = float(rec["normal_rho"] * np.sin(2.0 * np.pi * rec["normal_x"]))
        else:
            cached = float(rec["normal_y"])
    pos = min(max(625 - int(rec["left"]), 0), 624)
    gen._load_engine(int(rec["the_initial_seed"]), rec["state"].astype(np.uint32), pos, cached)
