"""``strided.device``: where a tensor lives ("cpu", "meta", "cuda:1")."""

from __future__ import annotations

__all__ = ["device", "DEVICE_TYPES", "set_default_device", "get_default_device", "get_device_module"]

DEVICE_TYPES = ("cpu", "cuda", "meta")


class device:  # noqa: N801 - torch spells it lower case
    """A device type and optional index, as ``torch.device``.

    ``device("cuda:1")``, ``device("cuda", 1)``, ``device("cpu")``. Instances are interned, so
    comparing devices is cheap and a device can key a dict.
    """

    __slots__ = ("type", "index", "_str")
    _cache: dict = {}

    def __new__(cls, type_or_str, index: int | None = None):
        if isinstance(type_or_str, device):
            if index is not None:
                raise TypeError("device(): an index can't be given together with a device object")
            return type_or_str
        key = (type_or_str, index)
        cached = cls._cache.get(key)
        # True == 1.0 == 1 and they hash alike: only an exact str/int (and int index) may use the
        # entry of device(1); a bool or float goes on to the type checks below, which raise
        if cached is not None and (index is None or index.__class__ is int):
            cls_ = type_or_str.__class__
            if cls_ is str or cls_ is int:
                return cached
        if isinstance(type_or_str, int) and not isinstance(type_or_str, bool):
            dev_type, dev_index = "cuda", type_or_str  # torch: an int means a CUDA ordinal
        elif isinstance(type_or_str, str):
            dev_type, dev_index = _parse(type_or_str)
            if index is not None:
                if dev_index is not None:
                    raise RuntimeError(
                        f"type (string) must not include an index because index was passed "
                        f"explicitly: {type_or_str}"
                    )
                dev_index = index
        else:
            raise TypeError(f"device(): expected a str, int or device, got {type(type_or_str).__name__}")
        if dev_index is not None:
            if not isinstance(dev_index, int) or isinstance(dev_index, bool):
                raise TypeError(f"device(): argument 'index' (position 2) must be int, not {type(dev_index).__name__}")
            if dev_index < 0:
                raise RuntimeError(f"Device index must not be negative, got {dev_index!r}")
            if dev_type == "cpu" and dev_index != 0:
                raise RuntimeError(f"CPU device index must be -1 or zero, got {dev_index}")
        canonical = cls._cache.get((dev_type, dev_index))
        if canonical is not None:
            cls._cache[key] = canonical
            return canonical
        self = object.__new__(cls)
        self.type = dev_type
        self.index = dev_index
        self._str = dev_type if dev_index is None else f"{dev_type}:{dev_index}"
        cls._cache[key] = cls._cache[(dev_type, dev_index)] = self
        return self

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    # Instances are interned (one object per type and index), so identity hashing agrees with
    # __eq__ between devices, and costs no Python call: devices key the hot-path memos.
    __hash__ = object.__hash__

    def __reduce__(self):
        return (device, (self._str,))

    # ``with strided.device("cuda"):`` makes it the default device inside the block, as torch's
    # (Note [Default device]); the blocks nest, per process as torch's default device is
    def __enter__(self):
        _ENTERED.append(DEFAULT[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        set_default_device(_ENTERED.pop())


def _parse(s: str) -> tuple[str, int | None]:
    dev_type, sep, idx = s.strip().partition(":")
    if dev_type not in DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {s}"
        )
    if not sep:
        return dev_type, None
    if not idx.isdigit():
        raise RuntimeError(f"Invalid device string: '{s}'")
    return dev_type, int(idx)


CPU = device("cpu")
META = device("meta")


# Note [Default device]
# torch.set_default_device: factories given no device (empty, zeros, tensor, arange, rand, the windows...) make
# their tensors there; ``*_like`` follow their input and from_numpy stays on the CPU. ``DEFAULT[0]`` is None
# (the CPU) or the device set. The dispatcher keeps the matching backend key for its factory fast path
# (``set_default_factory_key``), and the Meta function memo of ``empty`` has the default in its key.
DEFAULT: list = [None]
_DEVICE = device  # the class, where a parameter takes its name (torch's ``set_default_device(device)``)
_ENTERED: list = []  # the defaults that ``with device(...)`` blocks replaced, innermost last


def set_default_device(device) -> None:  # noqa: F811 - torch's parameter name
    """Make factories called without ``device=`` allocate on ``device`` (None: the CPU again), as torch's."""
    from .dispatch.dispatcher import set_default_factory_key

    new = None if device is None else _DEVICE(device)
    if new is not None and new.type == "cpu":
        new = None
    set_default_factory_key(new)
    DEFAULT[0] = new


def get_default_device() -> device:
    """The device factories use when given none (``cuda`` resolves to the current CUDA device, as torch's)."""
    dev = DEFAULT[0]
    if dev is None:
        return CPU
    if dev.type == "cuda" and dev.index is None:
        from .backends.cuda_loader import _backend

        return device("cuda", _backend().current_device())
    return dev


def get_device_module(device=None):  # noqa: A002 - torch's argument name
    """The module of a device type -- ``strided.cuda`` for "cuda", ``strided.cpu`` for "cpu" (torch.cpu's shims) --
    and for None the current accelerator's, or ``strided.cpu`` when there is none."""
    import importlib

    from . import accelerator

    if isinstance(device, globals()["device"]):
        name = device.type
    elif isinstance(device, str):
        name = globals()["device"](device).type
    elif device is None:
        found = accelerator.current_accelerator()
        name = found.type if found is not None else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    if name not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return importlib.import_module(f"strided.{name}")
