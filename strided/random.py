"""Random number generators: ``Generator``, ``manual_seed``, ``seed``, ``initial_seed``.

Note [CPU random streams]
A CPU Generator is torch's: an mt19937 engine seeded as ``at::mt19937`` seeds it (the standard
``init_genrand`` of the seed's low 32 bits; NumPy's MT19937 bit generator runs it), and the CPU kernels
transform its words as ATen's CPU kernels do (``backends/cpu/random_streams.py``), in the order torch writes
them (torch's CPU kernels are FMA-contracted: ``a * b + c`` is rounded once here too). So
``strided.manual_seed(s)`` followed by ``rand`` / ``randint`` / ``randperm`` / ``bernoulli`` / ``dropout`` /
``exponential_`` / ``cauchy_`` / ``geometric_`` / ``multinomial`` / the uniform ``nn.init`` fills gives
torch's values bit for bit, and ``randn`` / ``normal_`` / ``log_normal_`` to an ulp (a few for float32, whose
AVX2 kernel has its own log / sin / cos; on a CPU with AVX-512F NumPy's float64 log / tan are its own SIMD
routines too, so float64 ``exponential_`` / ``cauchy_`` / ``log_normal_`` are then torch's to an ulp) while
consuming the same words -- a model initialized after the same
seed starts from torch's weights. Box-Muller's cached second normal (``next_double_normal``) is part of the
state, as in torch, and states are torch's bytes (Note [Generator state bytes]). Not matched: ``bernoulli_(p)``
/ dropout on an Intel CPU with torch's MKL build (MKL's own generator); the gamma-family samplers
(``_standard_gamma``, ``poisson``, ``binomial``, ``_sample_dirichlet``: NumPy's algorithms over the same engine);
``random_(0, None)`` on int32, taken as ``random_()``; ``randperm(n)`` from n = 2^32 / 20 (214,748,364) on, where
torch shuffles inside-out over 64-bit words and strided sorts 64-bit keys. Found against torch 2.14 (some transforms changed across
torch versions: the 64-bit-word threshold of ``randint``, half types' uniforms). The CUDA backend keeps its own
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

    __slots__ = ("device", "_seed", "_mt", "_np", "philox_offset", "next_double_normal")

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}")
        seed &= (1 << 64) - 1
        self.philox_offset = 0  # advanced by CUDA kernels, which draw from (seed, offset)
        if self.device.type == "cuda":  # no engine: CUDA draws are Philox's (seed, offset)
            self._seed, self._mt, self._np, self.next_double_normal = seed, None, None, None
        else:
            self._load_engine(seed, _init_genrand(seed), 624, None)
        return self

    def _load_engine(self, seed: int, key: np.ndarray, pos: int, cached) -> None:
        """Set the CPU engine: seed, mt19937's 624 words, words consumed of them, Box-Muller's cached value."""
        self._seed = seed
        self._mt = np.random.MT19937()
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._np = np.random.Generator(self._mt)  # shares the engine (Note [CPU random streams])
        self.next_double_normal = cached  # Box-Muller's cached second value

    def seed(self) -> int:
        """Reseed from OS entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The state as torch's uint8 CPU tensor (Note [Generator state bytes]): 5056 bytes for a CPU generator,
        16 (seed, offset) for a CUDA one; torch's ``set_state`` takes it, as :meth:`set_state` takes torch's."""
        from .random_state import get_state

        return get_state(self)

    def set_state(self, new_state) -> Generator:
        from .random_state import set_state

        set_state(self, new_state)
        return self

    @property
    def numpy(self) -> np.random.Generator:
        """A NumPy Generator over this generator's engine (samplers torch has no portable stream for)."""
        return self._np

    def __repr__(self) -> str:
        return f"<strided.Generator device={self.device} seed={self._seed}>"


def _init_genrand(seed: int) -> np.ndarray:
    """mt19937's 624-word state from ``seed``'s low 32 bits (``init_genrand``, as ``at::mt19937`` seeds)."""
    key = np.empty(624, np.uint32)
    x = seed & 0xFFFFFFFF
    key[0] = x
    for i in range(1, 624):
        x = (1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF
        key[i] = x
    return key


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


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


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
