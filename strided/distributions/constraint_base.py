"""The base class of the constraints (torch.distributions.constraints.Constraint)."""

from __future__ import annotations

__all__ = ["Constraint"]


class Constraint:
    """A region a variable must lie in; ``event_dim`` rightmost dims form one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of ``sample_shape + batch_shape``: whether each event of ``value`` is valid."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"
