"""torch's layout name for strided tensors: ``strided.strided`` (``torch.strided``), and its type ``strided.layout``.

strided has one layout, the strided one. Factories take ``layout=None`` or ``layout=strided.strided`` (the string
``"strided"`` too), and ``Tensor.layout`` is this constant, so torch code that passes or compares
``torch.strided`` runs with ``strided`` in place of ``torch``.
"""

from __future__ import annotations

from .memory_formats import NamedConstant

__all__ = ["layout", "strided"]


class layout(NamedConstant):  # noqa: N801 - torch's name
    """A tensor layout: equal to its name as a string, printed as torch prints its constants."""

    __slots__ = ()


strided = layout("strided")
