"""utils.data.DistributedSampler: each replica's indices are torch's, epoch by epoch (Note [Distributed sampling
without torch.distributed]); the replicas together cover the dataset; torch's errors."""

from __future__ import annotations

import pytest

import strided as st
from strided.utils.data import DataLoader, DistributedSampler, TensorDataset

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kw", [dict(num_replicas=4, rank=1), dict(num_replicas=4, rank=3, drop_last=True),
                                dict(num_replicas=3, rank=0, shuffle=False), dict(num_replicas=50, rank=49, seed=7),
                                dict(num_replicas=1, rank=0, seed=3)])
def test_indices_are_torchs_every_epoch(kw):
    data = list(range(23))
    ours, theirs = DistributedSampler(data, **kw), torch.utils.data.DistributedSampler(data, **kw)
    assert len(ours) == len(theirs)
    for epoch in range(3):
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        assert list(ours) == list(theirs)


def test_replicas_cover_the_dataset_and_feed_a_loader():
    data = TensorDataset(st.arange(10.0))
    seen = []
    for rank in range(3):
        loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, num_replicas=3, rank=rank))
        seen += [int(v) for (batch,) in loader for v in batch.tolist()]
    assert sorted(set(seen)) == list(range(10)) and len(seen) == 12  # 2 indices wrapped around to pad


def test_refusals_in_torchs_words():
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(list(range(4)))  # no torch.distributed to ask for the world size
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(list(range(4)), num_replicas=2, rank=2)
    with pytest.raises(TypeError, match="DistributedSampler: rank must be an int, not str"):
        DistributedSampler(list(range(4)), num_replicas=2, rank="1")
