"""nn.AdaptiveLogSoftmaxWithLoss: the efficient softmax approximation of Grave et al.

Note [Adaptive softmax row selection]
The head scores the ``shortlist_size`` frequent classes plus one entry per tail cluster; a row whose target
lies in cluster i adds ``log_softmax(tail[i](x))`` at the target's place in the cluster to the head's
log-probability of cluster i. The point of the method is that a tail runs only on the rows whose targets
fall in it, so the per-cluster batch sizes are data. torch finds each cluster's rows with a ``nonzero``,
one host synchronization per cluster. Here rows are grouped with no host read: each row's cluster id is the
number of cutoffs at or below its target (out-of-range targets get an id past the last cluster), a stable
``argsort`` of the ids lists the rows cluster by cluster (in ascending row order, as nonzero would), and
``one_hot(ids).sum(0)`` counts them; one host read of those counts (n_clusters + 2 integers) sizes every
cluster's slice of the sorted rows and tells whether any target was out of range (torch's error, whose
text needs the target's min and max: read only on that path). A masked formulation (every tail on every
row, ``where`` on the cluster mask) would need no host read at all, but it costs a (batch, cluster size)
log-softmax per cluster, the full-vocabulary memory the method exists to avoid, so it is not used. On the
meta device there are no counts to read: every cluster takes every row, which gives the same output
shapes. A cluster's contribution is added with ``index_add`` at its rows (differentiable; rows of different
clusters are disjoint), and the head's column per row is the target (shortlist) or the cluster's entry.
"""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence

from ... import dtypes as _dt
from ...ops import bound as ops
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al., https://arxiv.org/abs/1609.04309).

    Classes ``[0, cutoffs[0])`` are scored by the head with one extra entry per cluster
    ``[cutoffs[i], cutoffs[i + 1])``; cluster i's tail projects to ``in_features // div_value ** (i + 1)``
    features before its classes. ``forward(input, target)`` returns ``_ASMoutput(output, loss)``: each row's
    log-probability of its target, and their negated mean.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **factory_kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, **factory_kwargs),
                                        Linear(hsz, osz, bias=False, **factory_kwargs)))

    def reset_parameters(self) -> None:
        """Re-draw every parameter as ``__init__`` does (Linear's defaults)."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _check(self, input: Tensor, target: Tensor) -> None:
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.dtype.is_floating_point or target.dtype.is_complex or target.dtype == _dt.bool:
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")

    def _cluster_rows(self, target: Tensor) -> list[Tensor | None]:
        """Per cluster (shortlist first), the rows whose target falls in it, or None when there are none;
        raises torch's error for targets outside [0, n_classes) (Note [Adaptive softmax row selection])."""
        batch = target.shape[0]
        if target.device.type == "meta":
            every = ops.arange(0, batch, dtype=_dt.int64, device=target.device)
            return [every] * (self.n_clusters + 1)
        target = target.to(_dt.int64)
        ids = ops.zeros((batch,), dtype=_dt.int64, device=target.device)
        for cutoff in self.cutoffs:
            ids = ops.add(ids, ops.ge(target, cutoff).to(_dt.int64))
        ids = ops.masked_fill(ids, ops.lt(target, 0), self.n_clusters + 1)
        counts = ops.sum(ops.one_hot(ids, self.n_clusters + 2), [0]).tolist()  # the one host read
        if counts[-1]:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{ops.min(target).item()}, {ops.max(target).item()}] were found. ")
        order = ops.argsort(ids, stable=True)
        rows, start = [], 0
        for count in counts[:-1]:
            rows.append(ops.narrow(order, 0, start, count) if count else None)
            start += count
        return rows

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """``_ASMoutput(output, loss)``: each row's log-probability of its target and ``-output.mean()``;
        a 1-D input with a 0-D target is one unbatched row."""
        self._check(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else ops.unsqueeze(input_, 0)
        target = target_ if batched else ops.unsqueeze(target_, 0)
        rows = self._cluster_rows(target)
        output = ops.zeros((target.shape[0],), dtype=input.dtype, device=input.device)
        head_column = target
        for i in range(1, self.n_clusters + 1):
            low = self.cutoffs[i - 1]
            head_column = ops.where(ops.ge(target, low), self.shortlist_size + i - 1, head_column)
            if rows[i] is None:
                continue
            relative = ops.sub(ops.index_select(target, 0, rows[i]), low)
            cluster_output = self.tail[i - 1](ops.index_select(input, 0, rows[i]))
            local = ops.gather(F.log_softmax(cluster_output, dim=1), 1, ops.unsqueeze(relative, 1))
            output = ops.index_add(output, 0, rows[i], ops.squeeze(local, [1]))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        head_column = ops.unsqueeze(head_column.to(_dt.int64), 1)
        output = ops.add(output, ops.squeeze(ops.gather(head_logprob, 1, head_column), [1]))
        loss = ops.mean(ops.neg(output))
        if not batched:
            output = ops.squeeze(output, [0])
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """(N, n_classes) log-probabilities from the input and the head's output."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [ops.narrow(head_logprob, 1, 0, self.shortlist_size)]
        for i, _ in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(ops.add(cluster_logprob, ops.narrow(head_logprob, 1, self.shortlist_size + i, 1)))
        return ops.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """(N, n_classes) log-probabilities of every class for an (N, in_features) input."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row of an (N, in_features) input (int64); the tails run only on
        rows whose head maximum is a cluster entry, as torch's (one host read of those rows)."""
        head_output = self.head(input)
        output = ops.argmax(head_output, 1)
        if input.device.type == "meta":
            return ops.argmax(self._get_full_log_prob(input, head_output), 1)
        rows = ops.reshape(ops.nonzero(ops.ge(output, self.shortlist_size)), (-1,))
        if rows.shape[0] == 0:
            return output
        if rows.shape[0] == output.shape[0]:
            return ops.argmax(self._get_full_log_prob(input, head_output), 1)
        log_prob = self._get_full_log_prob(ops.index_select(input, 0, rows), ops.index_select(head_output, 0, rows))
        return ops.index_put(output, [rows], ops.argmax(log_prob, 1))
