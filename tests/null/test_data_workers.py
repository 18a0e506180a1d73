"""DataLoader with worker processes (``num_workers > 0``): the same batches as in-process loading,
IterableDataset replicas and sharding, seeds and ``worker_init_fn``, errors carried from workers
(exceptions, unpicklable batches, a dead worker, timeouts), persistent workers, ``in_order=False``,
clean shutdown, and the same batches as torch's loader when torch is installed."""

from __future__ import annotations

import os
import random
import time

import pytest

import strided as st
from strided.utils import data as D
from strided.utils.data import multiprocess_iter


def _batches(loader):
    return [[t.tolist() if isinstance(t, st.Tensor) else t for t in b] if isinstance(b, (list, tuple))
            else b.tolist() for b in loader]


def _dataset(n=23):
    return D.TensorDataset(st.arange(float(2 * n)).reshape(n, 2), st.arange(n))


@pytest.mark.parametrize("num_workers", [1, 3])
@pytest.mark.parametrize("kw", [{"batch_size": 4}, {"batch_size": 5, "drop_last": True}, {"batch_size": None}],
                         ids=str)
def test_workers_give_the_in_process_batches(num_workers, kw):
    ds = _dataset()
    assert _batches(D.DataLoader(ds, num_workers=num_workers, **kw)) == _batches(D.DataLoader(ds, **kw))
    shuffled = [_batches(D.DataLoader(ds, batch_size=4, shuffle=True, num_workers=w,
                                      generator=st.Generator().manual_seed(7))) for w in (0, num_workers)]
    assert shuffled[0] == shuffled[1]  # the sampler runs in the main process, so the order is the same


class Stream(D.IterableDataset):
    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = D.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_dataset_replicas_and_sharding():
    sharded = [b.tolist() for b in D.DataLoader(Stream(20), batch_size=3, num_workers=2)]
    assert sharded == [[0, 2, 4], [1, 3, 5], [6, 8, 10], [7, 9, 11], [12, 14, 16], [13, 15, 17], [18], [19]]
    replicas = sorted(x for b in D.DataLoader(Stream(5, shard=False), batch_size=2, num_workers=3)
                      for x in b.tolist())
    assert replicas == sorted(list(range(5)) * 3)  # each worker iterates its own copy, as torch's
    uneven = [b.tolist() for b in D.DataLoader(Stream(3), batch_size=2, num_workers=4, drop_last=True)]
    assert uneven == []  # every worker's shard is shorter than a batch


class WhoAmI(D.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = D.get_worker_info()
        return {"id": info.id, "n": info.num_workers, "seed": info.seed, "pid": os.getpid(),
                "rand": random.random(), "init": os.environ.get("STRIDED_TEST_WORKER_INIT", "")}


def _init(worker_id):
    os.environ["STRIDED_TEST_WORKER_INIT"] = str(worker_id)


def test_worker_info_seeds_and_init_fn():
    loader = D.DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=_init)
    batches = list(loader)
    ids = [b["id"].tolist() for b in batches]
    assert ids == [[0, 0], [1, 1], [0, 0], [1, 1]]  # tasks go to the workers in turn
    assert all(b["n"].tolist() == [2, 2] and b["init"] == [str(b["id"][0].item())] * 2 for b in batches)
    seeds = {b["id"][0].item(): b["seed"][0].item() for b in batches}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    assert len({b["pid"][0].item() for b in batches} | {os.getpid()}) == 3
    assert D.get_worker_info() is None  # in the main process
    again = list(D.DataLoader(WhoAmI(), batch_size=2, num_workers=2))
    assert again[0]["seed"][0].item() != seeds[0]  # a new base seed each epoch


class Failing(D.Dataset):
    def __init__(self, exc):
        self.exc = exc

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise self.exc
        return i


def test_worker_exceptions_reach_the_main_process():
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker process 1\.\n"
                                         r"Original Traceback.*__getitem__.*ValueError: bad sample 3"):
        list(D.DataLoader(Failing(ValueError("bad sample 3")), batch_size=2, num_workers=2))
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(D.DataLoader(Failing(KeyError("k")), batch_size=2, num_workers=2))


class Unpicklable(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        x = st.ones(2, requires_grad=True)
        return {"lambda": lambda: i} if i else x * 2


def test_a_batch_that_cannot_be_sent_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        list(D.DataLoader(Unpicklable(), batch_size=None, num_workers=1))
    with pytest.raises(Exception, match="(?i)pickle"):
        list(D.DataLoader(Unpicklable(), batch_size=None, num_workers=1, sampler=[1]))


class Slow(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


class Dies(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def test_timeout_and_a_dead_worker(monkeypatch):
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        list(D.DataLoader(Slow(), num_workers=1, timeout=0.5))
    monkeypatch.setattr(multiprocess_iter, "STATUS_CHECK_INTERVAL", 0.2)
    died = r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly \(exit code\(s\) 3\)"
    with pytest.raises(RuntimeError, match=died):
        list(D.DataLoader(Dies(), num_workers=1))


def test_persistent_workers_serve_every_epoch():
    loader = D.DataLoader(WhoAmI(), batch_size=4, num_workers=2, persistent_workers=True)
    first = [b["pid"].tolist() for b in loader]
    second = [b["pid"].tolist() for b in loader]
    assert first == second and len(first) == 2
    stream = D.DataLoader(Stream(7), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == [[0, 2], [1, 3], [4, 6], [5]]
    it = iter(loader)
    next(it)  # an epoch abandoned half way: the next one still starts from the beginning
    assert [b["pid"].tolist() for b in loader] == first


def test_out_of_order_early_exit_and_shutdown():
    ds = _dataset()
    assert sorted(map(str, _batches(D.DataLoader(ds, batch_size=4, num_workers=3, in_order=False)))) == sorted(
        map(str, _batches(D.DataLoader(ds, batch_size=4))))
    it = iter(D.DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in workers)
    finished = iter(D.DataLoader(ds, batch_size=2, num_workers=2))
    list(finished)
    assert not any(w.is_alive() for w in finished._workers)  # an exhausted epoch shuts its workers down
    assert len(D.DataLoader(ds, batch_size=4, num_workers=2)) == 6


def test_spawned_workers_and_pinning():
    ds = _dataset(6)
    loader = D.DataLoader(ds, batch_size=3, num_workers=1, multiprocessing_context="spawn")
    assert _batches(loader) == _batches(D.DataLoader(ds, batch_size=3))
    if not st.cuda.is_available():
        with pytest.warns(UserWarning, match="no accelerator is found"):
            assert len(list(D.DataLoader(ds, batch_size=3, num_workers=1, pin_memory=True))) == 2
    else:  # the main process pins what the workers send, then the copy to the GPU can be asynchronous
        for x, y in D.DataLoader(ds, batch_size=3, num_workers=2, pin_memory=True):
            assert x.is_pinned() and y.is_pinned()
            assert x.to("cuda", non_blocking=True).cpu().tolist() == x.tolist()


def test_batches_match_torch_with_workers():
    torch = pytest.importorskip("torch")
    x = [[float(i), float(-i)] for i in range(17)]
    ours = D.DataLoader(D.TensorDataset(st.tensor(x), st.arange(17)), batch_size=4, num_workers=2)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.arange(17)),
                                         batch_size=4, num_workers=2)
    assert [[t.tolist() for t in b] for b in ours] == [[t.tolist() for t in b] for b in theirs]

    class TorchStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id, 20, info.num_workers))

    theirs = [b.tolist() for b in torch.utils.data.DataLoader(TorchStream(), batch_size=3, num_workers=2)]
    assert [b.tolist() for b in D.DataLoader(Stream(20), batch_size=3, num_workers=2)] == theirs


class Mixed(D.Dataset):
    """Samples of several dtypes and structures, large enough to fill the pipes."""

    def __len__(self):
        return 40

    def __getitem__(self, i):
        return {"img": st.full((3, 64, 64), float(i)), "half": st.full((4,), i, dtype=st.bfloat16),
                "label": i, "name": f"s{i}", "pair": (st.tensor([i, -i]), [i % 2 == 0])}


def test_many_workers_large_mixed_batches_match_in_process():
    def flat(batches):
        return [(b["img"].sum().item(), b["half"].float().tolist(), b["label"].tolist(), b["name"],
                 b["pair"][0].tolist(), b["pair"][1][0].tolist()) for b in batches]

    expected = flat(D.DataLoader(Mixed(), batch_size=3))
    for kw in ({"num_workers": 4}, {"num_workers": 4, "prefetch_factor": 1}, {"num_workers": 2, "in_order": False}):
        got = flat(D.DataLoader(Mixed(), batch_size=3, **kw))
        assert (sorted(got) if kw.get("in_order") is False else got) == (
            sorted(expected) if kw.get("in_order") is False else expected)
    batch = next(iter(D.DataLoader(Mixed(), batch_size=3, num_workers=2)))
    assert batch["half"].dtype is st.bfloat16 and batch["img"].shape == (3, 3, 64, 64)
