"""torch's memory-format names: ``strided.channels_last``, ``strided.channels_last_3d``,
``strided.contiguous_format``, ``strided.preserve_format``.

strided's ops take memory formats as these strings (``memory_format="channels_last"``); the constants are
those strings under torch's names, so code written for torch (``x.contiguous(memory_format=
torch.channels_last)``) runs with ``strided`` in place of ``torch``.
"""

from __future__ import annotations

__all__ = ["memory_format", "channels_last", "channels_last_3d", "contiguous_format", "preserve_format",
           "NamedConstant"]


class NamedConstant(str):
    """A torch constant strided spells as its name: equal to the string, printed as ``strided.<name>``
    (memory formats here, the layout in ``layouts.py``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"strided.{str.__str__(self)}"

    __str__ = __repr__


class memory_format(NamedConstant):  # noqa: N801 - torch's name
    """A memory format: equal to its name as a string, printed as torch prints its constants."""

    __slots__ = ()


channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
