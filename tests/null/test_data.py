"""strided.utils.data: datasets, samplers, collation and the DataLoader, checked on their own and, where
torch is installed and the behaviour is deterministic, against torch.utils.data (structure, lengths,
dtypes, error and warning texts)."""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import strided as st
import strided.utils.data as D
from strided.utils.data import pin_memory as pin_module

Point = collections.namedtuple("Point", ["x", "y"])


# ---------------------------------------------------------------- helpers


def seeded(seed: int) -> st.Generator:
    g = st.Generator()
    g.manual_seed(seed)
    return g


def norm(x):
    """A library-neutral picture of a (nested) batch: tensors as (dtype name, shape, values)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return ("ndarray", x.dtype.str, x.tolist())
    if hasattr(x, "dtype") and hasattr(x, "tolist"):  # a strided or torch tensor
        return ("tensor", str(x.dtype).rsplit(".", 1)[-1], tuple(x.shape), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, [(k, norm(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    return (type(x).__name__, x)


def libs():
    """The two libraries behind one interface, for tests that run the same code on both."""
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    strided = SimpleNamespace(data=D, arange=st.arange, ones=st.ones, zeros=st.zeros)
    torch_ = SimpleNamespace(data=tud, arange=torch.arange, ones=torch.ones, zeros=torch.zeros)
    return strided, torch_


def outcome(fn, lib):
    """What ``fn(lib)`` does: its value (normalized), or the exception's type and text; plus warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", norm(fn(lib)))
        except Exception as e:  # noqa: BLE001 - the point is to compare any error
            result = ("error", type(e).__name__, _no_address(str(e)))
    return result, [_no_address(str(w.message)) for w in caught]


def _no_address(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


class Stream(D.IterableDataset):
    def __init__(self, n: int, length: int | None = None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if self.length is None:
            raise TypeError("no len")
        return self.length


# ---------------------------------------------------------------- import


def test_lazy_import_and_attribute_access():
    code = (
        "import sys, strided\n"
        "assert 'strided.utils.data' not in sys.modules, 'import strided must not load strided.utils.data'\n"
        "from strided.utils.data import DataLoader\n"
        "import strided.utils.data as D\n"
        "assert strided.utils.data is D and D.DataLoader is DataLoader\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    code = "import strided\nprint(strided.utils.data.TensorDataset.__name__)\n"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "TensorDataset"


def test_public_names_match_torch_in_process_core():
    expected = {
        "BatchSampler",
        "ChainDataset",
        "ConcatDataset",
        "DataLoader",
        "Dataset",
        "DistributedSampler",
        "IterableDataset",
        "RandomSampler",
        "Sampler",
        "SequentialSampler",
        "StackDataset",
        "Subset",
        "SubsetRandomSampler",
        "TensorDataset",
        "WeightedRandomSampler",
        "_DatasetKind",
        "default_collate",
        "default_convert",
        "get_worker_info",
        "random_split",
    }
    assert set(D.__all__) == expected
    assert all(hasattr(D, name) for name in expected)


# ---------------------------------------------------------------- datasets


def test_dataset_base_and_add():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        D.Dataset()[0]
    a = D.TensorDataset(st.arange(3))
    b = D.TensorDataset(st.arange(10, 12))
    both = a + b
    assert isinstance(both, D.ConcatDataset) and len(both) == 5
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11]
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, D.ChainDataset) and list(chained) == [0, 1, 0, 1, 2]


def test_tensor_dataset():
    x, y = st.arange(12.0).reshape(4, 3), st.arange(4)
    ds = D.TensorDataset(x, y)
    assert len(ds) == 4 and ds.tensors == (x, y)
    xi, yi = ds[2]
    assert xi.tolist() == [6.0, 7.0, 8.0] and yi.item() == 2
    assert [t.tolist() for t in ds[1:3]] == [[[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [1, 2]]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(st.ones(3), st.ones(4))


def test_stack_dataset():
    a, b = list(range(4)), list("abcd")
    assert D.StackDataset(a, b)[2] == (2, "c")
    assert D.StackDataset(x=a, y=b)[1] == {"x": 1, "y": "b"}
    assert len(D.StackDataset(a, b)) == 4
    sub = D.Subset(a, [3, 2, 1, 0])  # has __getitems__: used for the column
    assert D.StackDataset(sub, b).__getitems__([0, 1]) == [(3, "a"), (2, "b")]
    assert D.StackDataset(x=sub, y=b).__getitems__([3]) == [{"x": 0, "y": "d"}]

    class Short(list):
        def __getitems__(self, indices):
            return [self[i] for i in indices][:-1]

    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        D.StackDataset(Short(a), b).__getitems__([0, 1])
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        D.StackDataset()
    with pytest.raises(ValueError, match="but both types are given"):
        D.StackDataset(a, y=b)
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        D.StackDataset(a, b[:3])
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        D.StackDataset(x=a, y=b[:3])


def test_concat_dataset():
    ds = D.ConcatDataset([range(3), range(10, 12), range(0), range(20, 24)])
    assert ds.cumulative_sizes == [3, 5, 5, 9] and len(ds) == 9
    assert [ds[i] for i in range(9)] == [0, 1, 2, 10, 11, 20, 21, 22, 23]
    assert [ds[-i] for i in range(1, 10)] == [23, 22, 21, 20, 11, 10, 2, 1, 0]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-10]
    with pytest.raises(IndexError):
        ds[9]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        D.ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        D.ConcatDataset([range(2), Stream(2)])
    assert D.ConcatDataset(iter([range(2)])).cumulative_sizes == [2]  # any iterable


def test_chain_dataset():
    ds = D.ChainDataset([Stream(2, length=2), Stream(3, length=3)])
    assert list(ds) == [0, 1, 0, 1, 2] and len(ds) == 5
    bad = D.ChainDataset([Stream(1), range(3)])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(bad)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(D.ChainDataset([range(3)]))


def test_subset():
    base = list(range(10, 20))
    sub = D.Subset(base, [5, 0, 9])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [15, 10, 19]
    assert sub.__getitems__([2, 0]) == [19, 15]
    arr = np.arange(10, 20)
    assert D.Subset(arr, [5, 0, 9])[[0, 2]].tolist() == [15, 19]  # a list index goes through in one call
    nested = D.Subset(sub, [2, 1])
    assert nested.__getitems__([0, 1]) == [19, 10]  # delegates to the inner __getitems__

    class OnlyGetitem(D.Subset):
        def __getitem__(self, idx):
            return 0

    with pytest.raises(NotImplementedError, match="OnlyGetitem overrides __getitem__ but not __getitems__"):
        OnlyGetitem(base, [0])

    class Both(OnlyGetitem):
        def __getitems__(self, indices):
            return [0 for _ in indices]

    assert Both(base, [0, 1]).__getitems__([0, 1]) == [0, 0]


# ---------------------------------------------------------------- random_split


def test_random_split_lengths_and_partition():
    ds = list(range(10, 40))
    parts = D.random_split(ds, [5, 10, 15], generator=seeded(0))
    assert [len(p) for p in parts] == [5, 10, 15]
    values = [p[i] for p in parts for i in range(len(p))]
    assert sorted(values) == ds
    # the permutation is strided.randperm over the whole dataset, cut in order
    perm = st.randperm(30, generator=seeded(0)).tolist()
    assert [p.indices for p in parts] == [perm[:5], perm[5:15], perm[15:]]


def test_random_split_fractions_round_robin():
    assert [len(p) for p in D.random_split(range(10), [0.33, 0.33, 0.34], generator=seeded(1))] == [4, 3, 3]
    assert [len(p) for p in D.random_split(range(11), [0.5, 0.5], generator=seeded(1))] == [6, 5]
    assert [len(p) for p in D.random_split(range(7), [0.25] * 4, generator=seeded(1))] == [2, 2, 2, 1]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0. This might result in an empty dataset."):
        parts = D.random_split(range(1), [0.5, 0.5], generator=seeded(1))
    assert [len(p) for p in parts] == [1, 0]
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        D.random_split(range(10), [-0.5, 1.5])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        D.random_split(range(10), [3, 4])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        D.random_split(range(10), [0.3, 0.3])


def test_random_split_reproducible_and_default_generator():
    a = [p.indices for p in D.random_split(range(20), [10, 10], generator=seeded(7))]
    b = [p.indices for p in D.random_split(range(20), [10, 10], generator=seeded(7))]
    c = [p.indices for p in D.random_split(range(20), [10, 10], generator=seeded(8))]
    assert a == b and a != c
    st.manual_seed(3)
    d = [p.indices for p in D.random_split(range(20), [10, 10])]
    st.manual_seed(3)
    assert d == [p.indices for p in D.random_split(range(20), [10, 10])]
    st.manual_seed(3)
    assert sum(d, []) == st.randperm(20).tolist()


# ---------------------------------------------------------------- samplers


def test_sampler_base_and_sequential():
    with pytest.raises(NotImplementedError):
        iter(D.Sampler())
    s = D.SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5
    assert list(D.SequentialSampler([])) == []


def test_random_sampler_matches_torch_algorithm_with_a_generator():
    sampler = D.RandomSampler(range(10), generator=seeded(4))
    first, second = list(sampler), list(sampler)
    ref = seeded(4)
    assert first == st.randperm(10, generator=ref).tolist()
    # torch's loop always draws one more permutation for the ``num_samples % n`` tail, empty here
    st.randperm(10, generator=ref)
    assert second == st.randperm(10, generator=ref).tolist()  # the generator moves on between epochs
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10)) and first != second


def test_random_sampler_without_a_generator_seeds_a_fresh_one_from_the_default():
    st.manual_seed(11)
    order = list(D.RandomSampler(range(50)))
    st.manual_seed(11)
    seed = int(st.empty((), dtype=st.int64).random_(0, None).item())
    assert order == st.randperm(50, generator=seeded(seed)).tolist()
    st.manual_seed(11)
    assert list(D.RandomSampler(range(50))) == order
    st.manual_seed(12)
    assert list(D.RandomSampler(range(50))) != order


def test_random_sampler_num_samples_without_replacement():
    s = D.RandomSampler(range(4), num_samples=10, generator=seeded(2))
    got = list(s)
    assert len(s) == 10 and len(got) == 10
    assert sorted(got[:4]) == sorted(got[4:8]) == [0, 1, 2, 3]  # whole permutations first
    assert len(set(got[8:])) == 2  # then a prefix of one more
    ref = seeded(2)
    expected = sum((st.randperm(4, generator=ref).tolist() for _ in range(2)), [])
    expected += st.randperm(4, generator=ref).tolist()[:2]
    assert got == expected
    assert len(list(D.RandomSampler(range(10), num_samples=3, generator=seeded(0)))) == 3


def test_random_sampler_with_replacement_draws_in_chunks_of_32():
    s = D.RandomSampler(range(5), replacement=True, num_samples=70, generator=seeded(9))
    got = list(s)
    ref = seeded(9)
    expected = []
    for size in (32, 32, 6):
        expected += st.randint(0, 5, (size,), dtype=st.int64, generator=ref).tolist()
    assert got == expected and len(s) == 70
    assert all(0 <= i < 5 for i in got) and len(set(got)) > 1
    assert len(list(D.RandomSampler(range(5), replacement=True, generator=seeded(0)))) == 5


def test_random_sampler_num_samples_follows_the_data_source():
    data = [1, 2, 3]
    s = D.RandomSampler(data, generator=seeded(0))
    data.append(4)
    assert len(s) == 4 and sorted(s) == [0, 1, 2, 3]


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        D.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        D.RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        D.RandomSampler([])
    with pytest.raises(ValueError, match="but got num_samples=2.5"):
        D.RandomSampler(range(3), num_samples=2.5)


def test_subset_random_sampler():
    indices = [10, 20, 30, 40, 50]
    s = D.SubsetRandomSampler(indices, generator=seeded(5))
    got = list(s)
    assert len(s) == 5 and sorted(got) == indices
    assert got == [indices[i] for i in st.randperm(5, generator=seeded(5)).tolist()]
    st.manual_seed(1)
    a = list(D.SubsetRandomSampler(indices))
    st.manual_seed(1)
    assert list(D.SubsetRandomSampler(indices)) == a


def test_weighted_random_sampler():
    s = D.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=seeded(0))
    got = list(s)
    assert len(s) == 200 and len(got) == 200 and set(got) == {1, 3}
    assert got.count(3) > got.count(1)
    assert s.weights.dtype is st.float64
    no_rep = list(D.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False, generator=seeded(1)))
    assert sorted(no_rep) == [0, 1, 2, 3]
    assert list(D.WeightedRandomSampler([1.0, 2.0], 5, generator=seeded(3))) == list(
        D.WeightedRandomSampler([1.0, 2.0], 5, generator=seeded(3))
    )
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        D.WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="but got num_samples=True"):
        D.WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=0"):
        D.WeightedRandomSampler([1.0], 1, replacement=0)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        D.WeightedRandomSampler([[1.0, 2.0]], 1)


def test_batch_sampler():
    assert list(D.BatchSampler(range(10), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(D.BatchSampler(range(10), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert list(D.BatchSampler(range(9), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(D.BatchSampler(range(10), 3, False)) == 4 and len(D.BatchSampler(range(10), 3, True)) == 3
    assert len(D.BatchSampler(range(2), 3, True)) == 0 and list(D.BatchSampler(range(2), 3, True)) == []
    assert list(D.BatchSampler(D.SequentialSampler(range(0)), 2, False)) == []
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        D.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
        D.BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        D.BatchSampler(range(3), 2, 1)


# ---------------------------------------------------------------- collate


def test_default_collate_leaves():
    t = D.default_collate([st.ones(2, 3), st.zeros(2, 3)])
    assert t.shape == (2, 2, 3) and t.dtype is st.float32
    assert t.tolist() == [[[1.0] * 3] * 2, [[0.0] * 3] * 2]
    f = D.default_collate([1.5, 2.5])
    assert f.dtype is st.float64 and f.tolist() == [1.5, 2.5]
    i = D.default_collate([1, 2, 3])
    assert i.dtype is st.int64 and i.tolist() == [1, 2, 3]
    b = D.default_collate([True, False])
    assert b.dtype is st.bool and b.tolist() == [True, False]
    assert D.default_collate(["a", "b"]) == ["a", "b"]
    assert D.default_collate([b"a", b"b"]) == [b"a", b"b"]
    arr = D.default_collate([np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)])
    assert arr.dtype is st.int32 and arr.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert D.default_collate([np.float32(1), np.float32(2)]).dtype is st.float32
    assert D.default_collate([np.float64(1), np.float64(2)]).dtype is st.float64
    # torch promotes a batch of mixed NumPy scalars with its own table: int32 with float32 is float32
    assert D.default_collate([np.int32(1), np.float32(2)]).dtype is st.float32
    assert D.default_collate([np.bool_(True), np.bool_(False)]).dtype is st.bool


def test_default_collate_containers():
    batch = [
        {"img": st.ones(2), "label": 0, "meta": {"name": "a", "p": Point(1.0, np.int64(3))}, "pair": (1, 2)},
        {"img": st.zeros(2), "label": 1, "meta": {"name": "b", "p": Point(2.0, np.int64(4))}, "pair": (3, 4)},
    ]
    out = D.default_collate(batch)
    assert list(out) == ["img", "label", "meta", "pair"]
    assert out["img"].shape == (2, 2) and out["label"].tolist() == [0, 1]
    assert out["meta"]["name"] == ["a", "b"]  # a column of str stays a list of str
    p = out["meta"]["p"]
    assert type(p) is Point and p.x.dtype is st.float64 and p.y.dtype is st.int64 and p.y.tolist() == [3, 4]
    assert isinstance(out["pair"], list) and [c.tolist() for c in out["pair"]] == [[1, 3], [2, 4]]
    lists = D.default_collate([[1, 2.0], [3, 4.0]])
    assert isinstance(lists, list) and lists[0].dtype is st.int64 and lists[1].dtype is st.float64
    od = D.default_collate([collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)])
    assert type(od) is collections.OrderedDict and list(od) == ["b", "a"]
    dd = D.default_collate([collections.defaultdict(list, x=1), collections.defaultdict(list, x=2)])
    assert type(dd) is collections.defaultdict and dd.default_factory is list and dd["x"].tolist() == [1, 2]


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        D.default_collate([[1, 2], [3]])
    with pytest.raises(
        TypeError,
        match="default_collate: batch must contain tensors, numpy arrays, numbers, "
        "dicts or lists; found <class 'object'>",
    ):
        D.default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        D.default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        D.default_collate([st.ones(2), st.ones(3)])


def test_collate_fn_map_extension():
    from strided.utils.data.collate import collate, default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    fn_map = {**default_collate_fn_map, Box: collate_box}
    assert collate([{"b": Box(1), "n": 1}, {"b": Box(2), "n": 2}], collate_fn_map=fn_map)["b"] == 3
    with pytest.raises(TypeError, match="found <class"):
        D.default_collate([Box(1)])


def test_default_convert():
    a = np.arange(3.0)
    t = D.default_convert(a)
    assert isinstance(t, st.Tensor) and t.dtype is st.float64
    a[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0]  # as_tensor shares the array's memory, as torch's does
    assert D.default_convert(np.float64(2.0)).dtype is st.float64
    assert D.default_convert(np.int8(3)).dtype is st.int8
    strs = np.array(["a", "b"])
    assert D.default_convert(strs) is strs
    assert D.default_convert(1.5) == 1.5 and D.default_convert("s") == "s"
    x = st.ones(2)
    assert D.default_convert(x) is x
    out = D.default_convert({"a": np.zeros(2), "b": (np.ones(1), 3), "p": Point(np.int32(1), "y"), "r": range(2)})
    assert isinstance(out["a"], st.Tensor) and isinstance(out["b"], list) and isinstance(out["b"][0], st.Tensor)
    assert type(out["p"]) is Point and out["p"].x.dtype is st.int32 and out["p"].y == "y"
    assert out["r"] == [0, 1]  # range has no constructor from a list


# ---------------------------------------------------------------- DataLoader


def test_loader_batches_lengths_and_drop_last():
    ds = D.TensorDataset(st.arange(10.0).reshape(10, 1), st.arange(10))
    for batch_size, drop_last, sizes in [
        (3, False, [3, 3, 3, 1]),
        (3, True, [3, 3, 3]),
        (10, False, [10]),
        (20, True, []),
        (1, False, [1] * 10),
    ]:
        loader = D.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
        batches = list(loader)
        assert len(loader) == len(sizes) and [b[1].shape[0] for b in batches] == sizes
        assert [i for b in batches for i in b[1].tolist()] == list(range(sum(sizes)))
        assert all(b[0].shape == (b[1].shape[0], 1) for b in batches)


def test_loader_without_batching():
    loader = D.DataLoader([np.float64(1.0), {"a": np.arange(2)}, (1, 2)], batch_size=None)
    items = list(loader)
    assert len(loader) == 3 and loader.batch_sampler is None and loader.collate_fn is D.default_convert
    assert items[0].dtype is st.float64 and items[0].shape == ()
    assert isinstance(items[1]["a"], st.Tensor) and items[2] == [1, 2]


def test_loader_custom_samplers_and_collate():
    loader = D.DataLoader(list(range(10)), batch_size=2, sampler=[9, 8, 7, 6, 5])
    assert [b.tolist() for b in loader] == [[9, 8], [7, 6], [5]] and len(loader) == 3
    loader = D.DataLoader(list(range(10)), batch_sampler=[[0, 5], [1, 2, 3]])
    assert [b.tolist() for b in loader] == [[0, 5], [1, 2, 3]]
    assert loader.batch_size is None and loader.drop_last is False and len(loader) == 2
    loader = D.DataLoader(list(range(6)), batch_size=4, collate_fn=lambda batch: tuple(batch))
    assert list(loader) == [(0, 1, 2, 3), (4, 5)]


def test_loader_uses_getitems():
    class Batched(D.Dataset):
        def __init__(self):
            self.calls = []

        def __getitem__(self, i):
            raise AssertionError("the loader should fetch through __getitems__")

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [i * 10 for i in indices]

        def __len__(self):
            return 5

    ds = Batched()
    assert [b.tolist() for b in D.DataLoader(ds, batch_size=2)] == [[0, 10], [20, 30], [40]]
    assert ds.calls == [[0, 1], [2, 3], [4]]


def test_loader_iterable_dataset():
    loader = D.DataLoader(Stream(7, length=7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    loader = D.DataLoader(Stream(7, length=7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]] and len(loader) == 2
    assert list(D.DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]
    assert list(D.DataLoader(Stream(0), batch_size=2)) == []
    with pytest.raises(TypeError, match="no len"):
        len(D.DataLoader(Stream(3)))
    loader = D.DataLoader(Stream(5, length=3), batch_size=None)
    assert len(loader) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(loader) == [0, 1, 2, 3, 4]
    assert [str(w.message).split(">", 1)[1] for w in caught] == [
        f" was reported to be 3(when accessing len(dataloader)), but {k} samples have been fetched. " for k in (4, 5)
    ]


def test_loader_shuffle_reproducible_and_a_permutation():
    ds = D.TensorDataset(st.arange(100))

    def order(seed):
        return [i for (b,) in D.DataLoader(ds, batch_size=7, shuffle=True, generator=seeded(seed)) for i in b.tolist()]

    a = order(0)
    assert a == order(0) and a != order(1)
    assert sorted(a) == list(range(100)) and a != list(range(100))
    loader = D.DataLoader(ds, batch_size=7, shuffle=True, generator=seeded(0))
    epoch1 = [i for (b,) in loader for i in b.tolist()]
    epoch2 = [i for (b,) in loader for i in b.tolist()]
    assert epoch1 == a and sorted(epoch2) == list(range(100)) and epoch2 != epoch1
    # Note [Base seed]: each epoch draws one int64 from the loader's generator before the permutation
    ref = seeded(0)
    ref_perm = []
    for _ in range(2):
        st.empty((), dtype=st.int64).random_(0, None, generator=ref)
        ref_perm += st.randperm(100, generator=ref).tolist()
        st.randperm(100, generator=ref)  # the empty ``num_samples % n`` tail
    assert epoch1 + epoch2 == ref_perm
    st.manual_seed(5)
    b = [i for (t,) in D.DataLoader(ds, batch_size=7, shuffle=True) for i in t.tolist()]
    st.manual_seed(5)
    assert b == [i for (t,) in D.DataLoader(ds, batch_size=7, shuffle=True) for i in t.tolist()]


def test_end_to_end_shuffled_tensor_dataset():
    x = st.arange(60.0).reshape(20, 3)
    y = st.arange(20) * 2
    loader = D.DataLoader(D.TensorDataset(x, y), batch_size=6, shuffle=True, generator=seeded(42))
    seen_x, seen_y, sizes = [], [], []
    for bx, by in loader:
        assert bx.dtype is st.float32 and by.dtype is st.int64
        sizes.append(by.shape[0])
        seen_x += bx.tolist()
        seen_y += by.tolist()
    assert sizes == [6, 6, 6, 2] and len(loader) == 4
    assert sorted(seen_y) == y.tolist() and sorted(seen_x) == x.tolist()
    assert all(row == x[yi // 2].tolist() for row, yi in zip(seen_x, seen_y))  # pairs stay together
    assert seen_y != y.tolist()


def test_loader_argument_errors():
    ds = list(range(4))
    with pytest.raises(
        ValueError, match="num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
    ):
        D.DataLoader(ds, num_workers=-1)
    with pytest.raises(TypeError, match="DataLoader: num_workers must be an int, got '2'"):
        D.DataLoader(ds, num_workers="2")
    with pytest.raises(TypeError, match="DataLoader: prefetch_factor must be an int or None, got 2.0"):
        D.DataLoader(ds, num_workers=1, prefetch_factor=2.0)
    with pytest.raises(ValueError, match="prefetch_factor option should be non-negative"):
        D.DataLoader(ds, num_workers=2, prefetch_factor=-1)
    with pytest.raises(ValueError, match="multiprocessing_context option should specify a valid start method"):
        D.DataLoader(ds, num_workers=2, multiprocessing_context="nonesuch")
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        D.DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        D.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        D.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        D.DataLoader(ds, multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        D.DataLoader(ds, sampler=[0, 1], shuffle=True)
    for kwargs in [dict(batch_size=2), dict(shuffle=True), dict(sampler=[0]), dict(drop_last=True)]:
        with pytest.raises(
            ValueError,
            match="batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
        ):
            D.DataLoader(ds, batch_sampler=[[0]], **kwargs)
    with pytest.raises(
        ValueError, match="batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
    ):
        D.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        D.DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option, but got sampler=\\[0\\]"):
        D.DataLoader(Stream(3), sampler=[0])
    with pytest.raises(ValueError, match="expected unspecified batch_sampler option"):
        D.DataLoader(Stream(3), batch_sampler=[[0]])
    assert list(D.DataLoader(Stream(2), shuffle=False, batch_size=None)) == [0, 1]
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        D.DataLoader(ds, batch_size=0)  # the BatchSampler the loader builds checks it
    loader = D.DataLoader(ds, timeout=5)
    with pytest.raises(AssertionError, match="_SingleProcessDataLoaderIter requires timeout == 0"):
        iter(loader)
    loader = D.DataLoader(ds)
    for attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
            setattr(loader, attr, None)
    loader.collate_fn = list  # other attributes stay settable
    assert list(loader) == [[0], [1], [2], [3]]


def test_get_worker_info_is_none_while_loading():
    seen = []

    class Probe(D.IterableDataset):
        def __iter__(self):
            seen.append(D.get_worker_info())
            yield 1

    assert [b.tolist() for b in D.DataLoader(Probe())] == [[1]]
    assert seen == [None] and D.get_worker_info() is None


def test_iterator_len_and_pickling():
    it = iter(D.DataLoader(list(range(5)), batch_size=2))
    assert len(it) == 3 and iter(it) is it
    import pickle

    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(it)


# ---------------------------------------------------------------- pinning


class Pinnable:
    def __init__(self, v):
        self.v, self.pinned = v, False

    def pin_memory(self):
        out = Pinnable(self.v)
        out.pinned = True
        return out


def test_pin_memory_recurses_like_torch():
    data = {
        "a": Pinnable(1),
        "b": [Pinnable(2), "s", b"b", 3],
        "c": (Pinnable(3),),
        "p": Point(Pinnable(4), 5),
        "o": collections.OrderedDict(z=Pinnable(5)),
        "r": range(2),
    }
    out = pin_module.pin_memory(data)
    assert out["a"].pinned and out["b"][0].pinned and out["b"][1:] == ["s", b"b", 3]
    assert type(out["c"]) is tuple and out["c"][0].pinned
    assert type(out["p"]) is Point and out["p"].x.pinned and out["p"].y == 5
    assert type(out["o"]) is collections.OrderedDict and out["o"]["z"].pinned
    assert out["r"] == [0, 1]
    assert not data["a"].pinned  # the input is not modified


def test_loader_pin_memory_with_an_accelerator(monkeypatch):
    monkeypatch.setattr(pin_module, "accelerator_available", lambda: True)
    loader = D.DataLoader([Pinnable(1), Pinnable(2)], batch_size=2, collate_fn=lambda b: {"items": b}, pin_memory=True)
    (batch,) = list(loader)
    assert [p.pinned for p in batch["items"]] == [True, True]
    tensors = D.DataLoader(D.TensorDataset(st.arange(4)), batch_size=2, pin_memory=True)
    if st.cuda.is_available():
        assert all(t.is_pinned() for (t,) in tensors)
    else:  # the batch really goes through Tensor.pin_memory, which needs CUDA
        with pytest.raises(RuntimeError, match="no CUDA device is available|CUDA is not available"):
            list(tensors)


@pytest.mark.skipif(st.cuda.is_available(), reason="checks the path taken without an accelerator")
def test_loader_pin_memory_without_an_accelerator_warns_and_skips():
    loader = D.DataLoader(D.TensorDataset(st.arange(4)), batch_size=2, pin_memory=True)
    with pytest.warns(
        UserWarning,
        match="'pin_memory' argument is set as true but no accelerator is found, then "
        "device pinned memory won't be used.",
    ):
        batches = list(loader)
    assert [t.tolist() for (t,) in batches] == [[0, 1], [2, 3]] and not any(t.is_pinned() for (t,) in batches)
    loader = D.DataLoader(list(range(2)), pin_memory=True, pin_memory_device="cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(loader)
    assert [str(w.message) for w in caught] == [
        "pin_memory_device is deprecated, the current accelerator will be used as the device,ignore "
        "pin_memory_device='cuda'.",
        "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used.",
    ]


# ---------------------------------------------------------------- against torch


def _compare(fn, expect: str = "ok"):
    strided, torch_ = libs()
    ours, theirs = outcome(fn, strided), outcome(fn, torch_)
    assert ours[0][0] == expect, ours
    assert ours == theirs


def make_stream(lib, n, length=None):
    """``range(n)`` as a subclass of ``lib``'s IterableDataset, with ``__len__`` when ``length`` is given."""

    class S(lib.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

    if length is not None:
        S.__len__ = lambda self: length
    return S()


ERROR_CASES = {
    "tensor size mismatch": lambda L: L.data.TensorDataset(L.ones(3), L.ones(4)),
    "concat empty": lambda L: L.data.ConcatDataset([]),
    "concat iterable": lambda L: L.data.ConcatDataset([make_stream(L, 2)]),
    "concat negative": lambda L: L.data.ConcatDataset([range(3)])[-4],
    "stack none": lambda L: L.data.StackDataset(),
    "stack both": lambda L: L.data.StackDataset(range(2), x=range(2)),
    "stack sizes": lambda L: L.data.StackDataset(range(2), range(3)),
    "chain non-iterable": lambda L: list(L.data.ChainDataset([range(3)])),
    "dataset getitem": lambda L: L.data.Dataset()[0],
    "split sum": lambda L: L.data.random_split(range(10), [3, 4]),
    "split fraction": lambda L: L.data.random_split(range(10), [-0.5, 1.5]),
    "random replacement": lambda L: L.data.RandomSampler(range(3), replacement=1),
    "random num_samples": lambda L: L.data.RandomSampler(range(3), num_samples=0),
    "random empty": lambda L: L.data.RandomSampler([]),
    "batch size 0": lambda L: L.data.BatchSampler(range(3), 0, False),
    "batch size bool": lambda L: L.data.BatchSampler(range(3), True, False),
    "batch drop_last": lambda L: L.data.BatchSampler(range(3), 2, 1),
    "weighted num_samples": lambda L: L.data.WeightedRandomSampler([1.0], 0),
    "weighted replacement": lambda L: L.data.WeightedRandomSampler([1.0], 1, replacement=0),
    "weighted shape": lambda L: L.data.WeightedRandomSampler([[1.0, 2.0]], 1),
    "num_workers negative": lambda L: L.data.DataLoader(range(3), num_workers=-1),
    "timeout negative": lambda L: L.data.DataLoader(range(3), timeout=-1),
    "prefetch": lambda L: L.data.DataLoader(range(3), prefetch_factor=2),
    "persistent": lambda L: L.data.DataLoader(range(3), persistent_workers=True),
    "mp context": lambda L: L.data.DataLoader(range(3), multiprocessing_context="spawn"),
    "sampler+shuffle": lambda L: L.data.DataLoader(range(3), sampler=[0], shuffle=True),
    "batch_sampler+batch_size": lambda L: L.data.DataLoader(range(3), batch_sampler=[[0]], batch_size=2),
    "batch_sampler+drop_last": lambda L: L.data.DataLoader(range(3), batch_sampler=[[0]], drop_last=True),
    "None+drop_last": lambda L: L.data.DataLoader(range(3), batch_size=None, drop_last=True),
    "iterable shuffle": lambda L: L.data.DataLoader(make_stream(L, 3), shuffle=True),
    "iterable sampler": lambda L: L.data.DataLoader(make_stream(L, 3), sampler=[0]),
    "iterable batch_sampler": lambda L: L.data.DataLoader(make_stream(L, 3), batch_sampler=[[0]]),
    "timeout iter": lambda L: iter(L.data.DataLoader(range(3), timeout=5)),
    "setattr": lambda L: setattr(L.data.DataLoader(range(3)), "batch_size", 2),
    "collate object": lambda L: L.data.default_collate([Pinnable(1)]),
    "collate unequal": lambda L: L.data.default_collate([[1, 2], [3]]),
    "collate str array": lambda L: L.data.default_collate([np.array(["a"]), np.array(["b"])]),
    "collate stack": lambda L: L.data.default_collate([L.ones(2), L.ones(3)]),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_match_torch(case):
    _compare(ERROR_CASES[case], expect="error")


@pytest.mark.parametrize("n", [0, 1, 7, 12])
@pytest.mark.parametrize("batch_size", [1, 3, 12, None])
@pytest.mark.parametrize("drop_last", [False, True])
def test_loader_structure_matches_torch(n, batch_size, drop_last):
    def run(L):
        ds = L.data.TensorDataset(L.arange(2 * n).reshape(n, 2), L.arange(n))
        loader = L.data.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
        return {"len": len(loader), "batches": list(loader)}

    _compare(run, expect="error" if batch_size is None and drop_last else "ok")


@pytest.mark.parametrize("n", [0, 5, 6])
@pytest.mark.parametrize("batch_size", [2, 6, None])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("length", [None, 3, 6])
def test_iterable_loader_matches_torch(n, batch_size, drop_last, length):
    def run(L):
        loader = L.data.DataLoader(make_stream(L, n, length), batch_size=batch_size, drop_last=drop_last)
        return {"len": len(loader) if length is not None else None, "batches": list(loader)}

    _compare(run, expect="error" if batch_size is None and drop_last else "ok")


COLLATE_BATCHES = {
    "tensors": lambda L: [L.ones(2, 3), L.arange(6.0).reshape(2, 3)],
    "python numbers": lambda L: [[1, 2.5, True], [3, 4.5, False]],
    "strings": lambda L: [("a", b"x"), ("b", b"y")],
    "numpy": lambda L: [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)],
    "numpy scalars": lambda L: [
        {"f": np.float32(1), "i": np.int64(2), "m": np.int32(3), "b": np.bool_(True)},
        {"f": np.float32(4), "i": np.int64(5), "m": np.float32(6), "b": np.bool_(False)},
    ],
    "nested": lambda L: [
        {"x": L.ones(2), "y": {"z": (1, [2.0, "s"])}, "p": Point(L.ones(1), 3)},
        {"x": L.zeros(2), "y": {"z": (4, [5.0, "t"])}, "p": Point(L.zeros(1), 6)},
    ],
    "ordered": lambda L: [collections.OrderedDict(b=1, a=np.float64(2.0))] * 3,
    "namedtuple of arrays": lambda L: [Point(np.ones(2), np.zeros((1, 2))), Point(np.ones(2), np.ones((1, 2)))],
}


@pytest.mark.parametrize("case", list(COLLATE_BATCHES))
def test_collate_and_convert_match_torch(case):
    _compare(lambda L: L.data.default_collate(COLLATE_BATCHES[case](L)))
    _compare(lambda L: [L.data.default_convert(sample) for sample in COLLATE_BATCHES[case](L)])


@pytest.mark.parametrize("n", [1, 2, 7, 10, 11, 100])
@pytest.mark.parametrize("fractions", [[0.5, 0.5], [0.33, 0.33, 0.34], [0.1] * 10, [0.7, 0.2, 0.1], [1.0], [0.25] * 4])
def test_random_split_lengths_match_torch(n, fractions):
    _compare(lambda L: [len(s) for s in L.data.random_split(range(n), fractions)])


def test_sampler_lengths_match_torch():
    def run(L):
        return [
            len(L.data.RandomSampler(range(10))),
            len(L.data.RandomSampler(range(10), num_samples=25)),
            len(list(L.data.RandomSampler(range(10), num_samples=25))),
            len(list(L.data.RandomSampler(range(10), replacement=True, num_samples=70))),
            sorted(L.data.RandomSampler(range(10))),
            sorted(L.data.SubsetRandomSampler([3, 1, 4])),
            len(L.data.WeightedRandomSampler([1.0, 2.0], 9)),
            list(L.data.BatchSampler(range(10), 4, False)),
            list(L.data.BatchSampler(L.data.SequentialSampler(range(10)), 4, True)),
            len(L.data.DataLoader(range(10), batch_sampler=L.data.BatchSampler(range(10), 3, False))),
            len(L.data.DataLoader(range(10), batch_size=3, shuffle=True, drop_last=True)),
        ]

    _compare(run)


def test_generator_consumption_matches_torch():
    """Each epoch of a shuffled loader draws one int64 from its generator, then the permutation: the
    same recipe reproduces the loader's order in both libraries (the streams themselves differ)."""
    strided, torch_ = libs()
    import torch

    for L, Gen, randperm, empty, int64 in [
        (strided, st.Generator, st.randperm, st.empty, st.int64),
        (torch_, torch.Generator, torch.randperm, torch.empty, torch.int64),
    ]:
        g = Gen()
        g.manual_seed(3)
        loader = L.data.DataLoader(L.arange(20), batch_size=6, shuffle=True, generator=g)
        got = [i for _ in range(2) for b in loader for i in b.tolist()]
        ref = Gen()
        ref.manual_seed(3)
        expected = []
        for _ in range(2):
            empty((), dtype=int64).random_(0, None, generator=ref)
            expected += randperm(20, generator=ref).tolist()
            randperm(20, generator=ref)  # RandomSampler's empty ``num_samples % n`` tail
        assert got == expected, L


@pytest.mark.skipif(st.cuda.is_available(), reason="checks the path taken without an accelerator")
def test_pin_memory_warnings_match_torch():
    def run(L):
        return list(L.data.DataLoader(L.arange(4), batch_size=2, pin_memory=True, pin_memory_device="cuda"))

    libs()  # skips without torch
    import torch

    if torch.accelerator.is_available():
        pytest.skip("torch sees an accelerator here")
    _compare(run)
