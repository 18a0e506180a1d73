"""``Distribution``: the base class of every distribution (torch.distributions.Distribution).

Note [Argument validation]
As in torch, validation is on by default (off under ``python -O``), switched globally with
``Distribution.set_default_validate_args`` or per instance with ``validate_args``. The constructor checks
every parameter present in the instance ``__dict__`` against ``arg_constraints`` (lazy, derived parameters
are skipped: Note [Lazy parameters]); ``log_prob``, ``cdf`` check the value's shape and support. The
errors are torch's, word for word; a check reads one bool from the device (a sync on CUDA, as torch's).
Meta tensors hold no values: there the value checks are skipped (torch fails reading them), the shape
checks still run.
"""

from __future__ import annotations

import warnings

from ..autograd import no_grad
from ..ops import bound as ops
from ..tensor import Size, Tensor
from . import constraints
from .utils import all_true as _all_true
from .utils import lazy_property

__all__ = ["Distribution"]

_SCALAR = Size()


class Distribution:
    """The abstract base class of probability distributions.

    Parameters
    ----------
    batch_shape : Size
        The shape over which the parameters are batched.
    event_shape : Size
        The shape of a single sample (without batching).
    validate_args : bool, optional
        Whether to validate arguments; the class default when None.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution that does not set ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=_SCALAR, event_shape=_SCALAR, validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                    "initialize the distribution with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # Note [Lazy parameters]
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A distribution with the batch dims expanded to ``batch_shape`` (views of the parameters, no
        copy, no new validation)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the ``Constraint`` it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The ``Constraint`` of the distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, outside the autograd graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterized sample: differentiable w.r.t. the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """Deprecated: ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density / mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support along dim 0, shaped ``(cardinality,) + batch_shape +
        event_shape`` (singleton batch dims when not ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``."""
        return ops.exp(self.entropy())

    def _extended_shape(self, sample_shape=()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` broadcasts with ``batch_shape + event_shape`` and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. Please initialize the "
                "distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"
