"""Named-tuple results of multi-output ops (``torch.return_types``).

``strided.max(x, 0)`` returns ``strided.return_types.max(values=..., indices=...)``: a ``tuple``
subclass (unpacks, indexes and compares like a tuple) whose fields are also attributes, printed as
torch prints its structseqs.
"""

from __future__ import annotations

from operator import itemgetter

__all__ = ["max", "min", "sort", "topk", "aminmax", "median", "nanmedian", "mode", "cummax", "cummin", "geqrf",
           "structseq"]


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """A tuple subclass ``name`` with read-only attributes ``fields`` (torch's structseq)."""
    n = len(fields)

    def __new__(cls, sequence):  # noqa: N807 - tuple protocol
        items = tuple(sequence)
        if len(items) != n:
            raise TypeError(f"strided.return_types.{name} takes a {n}-sequence ({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):  # noqa: N807
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"strided.return_types.{name}(\n{body})"

    def __reduce__(self):  # noqa: N807
        return (cls, (tuple(self),))

    namespace = {
        "__slots__": (), "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
        "__module__": __name__, "__qualname__": name, "_fields": fields, "n_fields": n,
        "n_sequence_fields": n, "__doc__": f"{name}({', '.join(fields)})",
    }
    for i, f in enumerate(fields):
        namespace[f] = property(itemgetter(i), doc=f"Alias for field number {i}")
    cls = type(name, (tuple,), namespace)
    return cls


max = structseq("max", ("values", "indices"))  # noqa: A001 - torch's name
min = structseq("min", ("values", "indices"))  # noqa: A001
sort = structseq("sort", ("values", "indices"))
topk = structseq("topk", ("values", "indices"))
aminmax = structseq("aminmax", ("min", "max"))
median = structseq("median", ("values", "indices"))
nanmedian = structseq("nanmedian", ("values", "indices"))
mode = structseq("mode", ("values", "indices"))
cummax = structseq("cummax", ("values", "indices"))
cummin = structseq("cummin", ("values", "indices"))
kthvalue = structseq("kthvalue", ("values", "indices"))
histogram = structseq("histogram", ("hist", "bin_edges"))
histogramdd = structseq("histogramdd", ("hist", "bin_edges"))
frexp = structseq("frexp", ("mantissa", "exponent"))
geqrf = structseq("geqrf", ("a", "tau"))
