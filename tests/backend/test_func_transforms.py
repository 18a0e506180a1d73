"""strided.func's vjp, jvp, jacrev, jacfwd, hessian and vmap against torch.func: values, the structures of
results (pytrees in, pytrees out), has_aux / argnums, composition (per-sample gradients, Hessians),
randomness modes, and the errors in torch's words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import func as sfunc

torch = pytest.importorskip("torch")
tfunc = torch.func


def host(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def close(s, t, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(host(s), t.detach().double().numpy(), rtol=rtol, atol=atol)


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return st.tensor(a), torch.tensor(a)


def fn(lib):
    return lambda x, y: (lib.sin(x) * y).sum(-1) + (x * x).mean()


def test_vjp_matches_torch_with_pytrees_and_aux():
    (sx, tx), (sy, ty) = pair(4, 3), pair(4, 3, seed=1)
    s_out, s_fn = sfunc.vjp(fn(st), sx, sy)
    t_out, t_fn = tfunc.vjp(fn(torch), tx, ty)
    close(s_out, t_out)
    (sc, tc) = pair(4, seed=2)
    sg, tg = s_fn(sc), t_fn(tc)
    assert isinstance(sg, tuple) and len(sg) == 2
    for a, b in zip(sg, tg):
        close(a, b)
    # dict primal, tuple output, aux
    s_out, s_fn, s_aux = sfunc.vjp(lambda d: (d["w"].exp(), {"n": d["w"].norm()}), {"w": sx}, has_aux=True)
    t_out, t_fn, t_aux = tfunc.vjp(lambda d: (d["w"].exp(), {"n": d["w"].norm()}), {"w": tx}, has_aux=True)
    close(s_aux["n"], t_aux["n"])
    (g,) = s_fn(st.ones_like(s_out))
    (h,) = t_fn(torch.ones_like(t_out))
    close(g["w"], h["w"])
    assert not s_out.requires_grad and not g["w"].requires_grad  # detached: no input required grad


def test_vjp_errors_match_torch():
    _, s_fn = sfunc.vjp(lambda x: x * 2, st.ones(2))
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        s_fn(st.ones(3))
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents to be the same"):
        s_fn((st.ones(2),))


def test_jvp_matches_torch():
    (sx, tx), (sy, ty) = pair(4, 3), pair(4, 3, seed=1)
    (su, tu), (sv, tv) = pair(4, 3, seed=2), pair(4, 3, seed=3)
    s_out, s_j = sfunc.jvp(fn(st), (sx, sy), (su, sv))
    t_out, t_j = tfunc.jvp(fn(torch), (tx, ty), (tu, tv))
    close(s_out, t_out)
    close(s_j, t_j, rtol=1e-4, atol=1e-5)
    # an output that does not depend on the input: zero tangent; aux
    s_out, s_j, aux = sfunc.jvp(lambda x: (st.ones(2), x.sum()), (sx,), (su,), has_aux=True)
    assert host(s_j).tolist() == [0.0, 0.0] and float(aux) == pytest.approx(float(tx.sum()), rel=1e-5)


def test_jvp_errors_match_torch():
    with pytest.raises(RuntimeError, match=r"jvp\(f, primals, tangents\): Expected primals to be a tuple"):
        sfunc.jvp(lambda x: x, st.ones(2), st.ones(2))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        sfunc.jvp(lambda x: x, (st.ones(2),), (st.ones(2), st.ones(2)))
    with pytest.raises(RuntimeError, match=r"of size \[2\] while the given forward gradient is of size \[3\]"):
        sfunc.jvp(lambda x: x, (st.ones(2),), (st.ones(3),))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(name):
    (sx, tx), (sy, ty) = pair(3), pair(3, seed=1)
    s_t, t_t = getattr(sfunc, name), getattr(tfunc, name)

    def f(lib):
        return lambda x, y: {"a": lib.sin(x) * y, "b": (x @ y).reshape(1)}

    s = s_t(f(st), argnums=(0, 1))(sx, sy)
    t = t_t(f(torch), argnums=(0, 1))(tx, ty)
    assert set(s) == {"a", "b"} and isinstance(s["a"], tuple) and len(s["a"]) == 2
    for k in ("a", "b"):
        for a, b in zip(s[k], t[k]):
            assert tuple(a.shape) == tuple(b.shape)
            close(a, b)
    (sw, tw) = pair(2, 3, seed=4)
    s = s_t(lambda p, x: p["w"] @ x, has_aux=False)({"w": sw}, sx)
    t = t_t(lambda p, x: p["w"] @ x)({"w": tw}, tx)
    assert tuple(s["w"].shape) == (2, 2, 3)
    close(s["w"], t["w"])


def test_hessian_matches_torch():
    (sx, tx) = pair(4)
    s = sfunc.hessian(lambda x: (x.sin() * x.pow(2)).sum())(sx)
    t = tfunc.hessian(lambda x: (x.sin() * x.pow(2)).sum())(tx)
    close(s, t, rtol=1e-4, atol=1e-5)


def test_vmap_in_and_out_dims_match_torch():
    (sx, tx), (sy, ty) = pair(5, 3), pair(3, 5, seed=1)
    for in_dims, out_dims in [((0, 1), 0), ((0, 1), 1), ((0, -1), -1), ((0, None), 0)]:
        y_s, y_t = (sy, ty) if in_dims[1] is not None else (sy[:, 0], ty[:, 0])

        def f(lib):
            return lambda x, y: lib.sin(x) * y + 1.0

        s = sfunc.vmap(f(st), in_dims, out_dims)(sx, y_s)
        t = tfunc.vmap(f(torch), in_dims, out_dims)(tx, y_t)
        assert tuple(s.shape) == tuple(t.shape)
        close(s, t)
    # nested pytree in_dims, tuple outputs with per-output out_dims, a zero-size batch
    s = sfunc.vmap(lambda d: (d["a"].sum(), d["b"] * 2), in_dims=({"a": 0, "b": 1},), out_dims=(0, 1))(
        {"a": sx, "b": sy})
    t = tfunc.vmap(lambda d: (d["a"].sum(), d["b"] * 2), in_dims=({"a": 0, "b": 1},), out_dims=(0, 1))(
        {"a": tx, "b": ty})
    for a, b in zip(s, t):
        close(a, b)
    assert tuple(sfunc.vmap(lambda x: x.sum(0))(st.ones(0, 3)).shape) == tuple(
        tfunc.vmap(lambda x: x.sum(0))(torch.ones(0, 3)).shape) == (0,)


def test_vmap_of_grad_gives_per_sample_gradients_as_torch():
    (sw, tw), (sx, tx), (sy, ty) = pair(3), pair(8, 3, seed=1), pair(8, seed=2)

    def loss(lib):
        return lambda w, x, y: (lib.tanh(x @ w) - y) ** 2

    s = sfunc.vmap(sfunc.grad(loss(st)), in_dims=(None, 0, 0))(sw, sx, sy)
    t = tfunc.vmap(tfunc.grad(loss(torch)), in_dims=(None, 0, 0))(tw, tx, ty)
    assert tuple(s.shape) == (8, 3)
    close(s, t)
    nested = sfunc.vmap(sfunc.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(sx[0], sy)
    close(nested, torch.vmap(torch.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(tx[0], ty))


def test_vmap_writes_in_place_through_to_mapped_inputs():
    x = st.zeros(3, 2)
    sfunc.vmap(lambda r: r.add_(1.0))(x)
    assert host(x).tolist() == [[1.0, 1.0]] * 3


def test_vmap_randomness_modes():
    x = st.ones(4, 3)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in randomness error mode"):
        sfunc.vmap(lambda r: r * st.rand(3))(x)
    st.manual_seed(0)
    same = sfunc.vmap(lambda r: r * st.rand(3), randomness="same")(x)
    assert all(host(same[i]).tolist() == host(same[0]).tolist() for i in range(4))
    st.manual_seed(0)
    after_one = (st.rand(3), st.rand(3))  # the generator after vmap("same") is as after one element
    st.manual_seed(0)
    sfunc.vmap(lambda r: r * st.rand(3), randomness="same")(x)
    assert host(st.rand(3)).tolist() == host(after_one[1]).tolist()
    diff = sfunc.vmap(lambda r: r * st.rand(3), randomness="different")(x)
    assert host(diff[0]).tolist() != host(diff[1]).tolist()
    g = st.Generator().manual_seed(1)
    sfunc.vmap(lambda r: r * st.rand(3, generator=g))(x)  # an explicit generator is not a default one


def test_vmap_errors_match_torch():
    f = lambda x: x  # noqa: E731
    cases = [
        (lambda: sfunc.vmap(f, in_dims=(0, 1))(st.ones(2, 3)), ValueError,
         r"in_dims is not compatible with the structure of `inputs`"),
        (lambda: sfunc.vmap(lambda a, b: a + b)(st.ones(2, 3), st.ones(3, 3)), ValueError,
         r"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes \[2, 3\]"),
        (lambda: sfunc.vmap(f, in_dims=3)(st.ones(2, 3)), ValueError,
         r"Got in_dim=3 for some input, but that input is a Tensor of dimensionality 2 so expected in_dim to "
         r"satisfy -2 <= in_dim < 2"),
        (lambda: sfunc.vmap(lambda a, n: a * n, in_dims=(0, 0))(st.ones(2, 3), 3), ValueError,
         r"Got in_dim=0 for an input but the input is of type <class 'int'>"),
        (lambda: sfunc.vmap(f, in_dims=None)(st.ones(2)), ValueError,
         r"expected `in_dims` to be int or a \(potentially nested\) tuple matching the structure of inputs"),
        (lambda: sfunc.vmap(lambda a: (a, 3))(st.ones(2)), ValueError, r"must only return Tensors, got type <class "),
        (lambda: sfunc.vmap(f, out_dims=(0, 1))(st.ones(2, 3)), ValueError,
         "out_dims is not compatible with the structure of `outputs`"),
        (lambda: sfunc.vmap(f, chunk_size=0)(st.ones(2)), ValueError,
         r"vmap: chunk_size should be None or greater than 0. \(got 0\)"),
        (lambda: sfunc.vmap(f, randomness="bogus"), RuntimeError,
         "Only allowed values for randomness are 'error', 'different', or 'same'. Got bogus"),
        (lambda: sfunc.vmap(lambda a: a * 2, out_dims=None)(st.ones(2, 3) * st.arange(2.0)[:, None]), ValueError,
         "can not return a BatchedTensor when out_dim is None"),
        (lambda: sfunc.jacrev(f, chunk_size=0), ValueError, "jacrev: `chunk_size` should be greater than 0."),
    ]
    for call, exc, words in cases:
        with pytest.raises(exc, match=words):
            call()
    # torch raises the same for the equivalent calls
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        tfunc.vmap(f, in_dims=(0, 1))(torch.ones(2, 3))
    # out_dims=None with an output equal across the batch is the one value
    assert host(sfunc.vmap(lambda a: st.ones(2), out_dims=None)(st.ones(3, 1))).tolist() == [1.0, 1.0]


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
def test_transforms_on_cuda_match_cpu():
    (sw, _), (sx, _), (sy, _) = pair(3), pair(8, 3, seed=1), pair(8, seed=2)

    def loss(w, x, y):
        return (st.tanh(x @ w) - y) ** 2

    per_sample = sfunc.vmap(sfunc.grad(loss), in_dims=(None, 0, 0))
    cpu = per_sample(sw, sx, sy)
    gpu = per_sample(sw.cuda(), sx.cuda(), sy.cuda())
    assert gpu.device.type == "cuda"
    np.testing.assert_allclose(host(gpu), host(cpu), rtol=1e-5, atol=1e-6)
    jac_c = sfunc.jacrev(lambda x: x.sin() * x.sum())(sx[0])
    jac_g = sfunc.jacrev(lambda x: x.sin() * x.sum())(sx[0].cuda())
    np.testing.assert_allclose(host(jac_g), host(jac_c), rtol=1e-5, atol=1e-6)
    _, j_c = sfunc.jvp(lambda x: x.exp(), (sx,), (sx,))
    _, j_g = sfunc.jvp(lambda x: x.exp(), (sx.cuda(),), (sx.cuda(),))
    np.testing.assert_allclose(host(j_g), host(j_c), rtol=1e-5, atol=1e-6)


def test_vmap_is_also_top_level_as_torch():
    assert st.vmap is sfunc.vmap and torch.vmap is torch.func.vmap


def test_model_ensembling_with_stack_module_state_as_torch():
    """torch's ensembling recipe: stack the models' states, vmap functional_call over them."""
    rng = np.random.default_rng(5)
    shapes = {"weight": (2, 3), "bias": (2,)}
    states = [{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()} for _ in range(4)]
    x = rng.standard_normal((6, 3)).astype(np.float32)
    outs = []
    for lib_, fn in ((st, sfunc), (torch, tfunc)):
        models = []
        for sd in states:
            m = lib_.nn.Linear(3, 2)
            m.load_state_dict({k: lib_.tensor(v) for k, v in sd.items()})
            models.append(m)
        params, buffers = fn.stack_module_state(models)
        assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad
        base = models[0]

        def call(p, b, xx, base=base, fn=fn):
            return fn.functional_call(base, (p, b), (xx,))

        outs.append(fn.vmap(call, in_dims=(0, 0, None))(params, buffers, lib_.tensor(x)).detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="stack_module_state: Expected at least one model, got 0."):
        sfunc.stack_module_state([])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class."):
        sfunc.stack_module_state([st.nn.Linear(2, 2), st.nn.ReLU()])
