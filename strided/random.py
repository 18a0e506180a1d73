"""Random number generators: ``Generator``, ``manual_seed``, ``seed``, ``initial_seed``.

Note [CPU random streams]
A CPU Generator wraps NumPy's Philox bit generator (counter-based, as torch's CUDA generator is):
the same seed gives the same stream on every machine. It is not bit-compatible with torch's
mt19937 CPU stream; reproducibility is within strided. The CUDA backend keeps its own
(seed, offset) Philox state per device and reads the seed from the same object.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .device import device as _device

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator", "get_rng_state",
           "set_rng_state", "fork_rng"]

_DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val


class Generator:
    """A seeded random stream for one device (``Generator(device="cpu")``)."""

    __slots__ = ("device", "_seed", "_np", "philox_offset")

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}")
        seed &= (1 << 64) - 1
        self._seed = seed
        self._np = np.random.Generator(np.random.Philox(seed))
        self.philox_offset = 0  # advanced by CUDA kernels, which draw from (seed, offset)
        return self

    def seed(self) -> int:
        """Reseed from OS entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return (self._seed, self.philox_offset, self._np.bit_generator.state)

    def set_state(self, state) -> Generator:
        self._seed, self.philox_offset, np_state = state
        self._np = np.random.Generator(np.random.Philox(self._seed))
        self._np.bit_generator.state = np_state
        return self

    @property
    def numpy(self) -> np.random.Generator:
        return self._np

    def __repr__(self) -> str:
        return f"<strided.Generator device={self.device} seed={self._seed}>"


default_generator = Generator("cpu")
_CUDA_GENERATORS: dict[int, Generator] = {}


def default_generator_for(dev) -> Generator:
    """The default generator of a device (one per CUDA device, made on first use)."""
    dev = _device(dev)
    if dev.type != "cuda":
        return default_generator
    idx = dev.index or 0
    gen = _CUDA_GENERATORS.get(idx)
    if gen is None:
        gen = _CUDA_GENERATORS[idx] = Generator(_device("cuda", idx))
        gen.manual_seed(default_generator.initial_seed())
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed the CPU generator and every CUDA device's generator (torch.manual_seed)."""
    default_generator.manual_seed(seed)
    for gen in _CUDA_GENERATORS.values():
        gen.manual_seed(seed)
    return default_generator


def seed() -> int:
    s = default_generator.seed()
    for gen in _CUDA_GENERATORS.values():
        gen.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, device_type: str = "cuda"):
    """Restore the CPU generator's state, and that of the default generators of the CUDA devices in
    ``devices`` (default: every CUDA generator made so far), when the block exits
    (``torch.random.fork_rng``)."""
    if not enabled:
        yield
        return
    if device_type != "cuda":
        raise RuntimeError(f"fork_rng: device_type {device_type!r} is not supported (strided has 'cuda')")
    if devices is None:
        gens = list(_CUDA_GENERATORS.values())
    else:
        gens = [default_generator_for(d if isinstance(d, (str, _device)) else _device("cuda", int(d)))
                for d in devices]
    cpu_state = default_generator.get_state()
    states = [(g, g.get_state()) for g in gens]
    try:
        yield
    finally:
        default_generator.set_state(cpu_state)
        for g, state in states:
            g.set_state(state)
