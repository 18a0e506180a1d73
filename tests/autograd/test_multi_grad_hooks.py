"""torch.autograd.graph's GradientEdge / get_gradient_edge / increment_version / register_multi_grad_hook,
against torch: which gradients the "all" hook sees per backward (inputs= included), "any", removal, errors."""

from __future__ import annotations

import pytest

import strided as st

torch = pytest.importorskip("torch")


def _scenario(lib):
    g = lib.autograd.graph
    a = lib.rand(2, 3, requires_grad=True)
    b = lib.rand(2, 3, requires_grad=True)
    c, d = a * b, a * b
    seen, first = [], []
    h = g.register_multi_grad_hook((a, b, c, d), lambda grads: seen.append([x is not None for x in grads]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    (c * 2).sum().backward(inputs=(b, c), retain_graph=True)
    (c.sum() + d.sum()).backward(retain_graph=True)
    h.remove()
    c.sum().backward(retain_graph=True)  # removed: no call
    with g.register_multi_grad_hook((a, b), lambda grad: first.append(tuple(grad.shape)), mode="any"):
        (c.sum() + d.sum()).backward(retain_graph=True)
    (c.sum() + d.sum()).backward()  # the context manager removed it
    return seen, first


def test_the_hooks_see_what_torchs_see():
    assert _scenario(st) == _scenario(torch)


def test_all_mode_gets_the_gradients_themselves_once_per_backward():
    a = st.tensor([1.0, 2.0], requires_grad=True)
    b = st.tensor([3.0, 4.0], requires_grad=True)
    got = []
    st.autograd.graph.register_multi_grad_hook((a, b), lambda grads: got.append([g if g is None else g.tolist() for g in grads]))
    (a * b).sum().backward()
    assert got == [[[3.0, 4.0], [1.0, 2.0]]]
    (a * 3).sum().backward()  # b is not in this graph: the hook does not wait for it
    assert got[1] == [[3.0, 3.0], None] and len(got) == 2


def test_autograd_grad_of_a_leaf_works():
    # torch raises "A leaf node was passed to _will_engine_execute_node but we are currently running
    # autograd.grad()" here; strided answers, because its engine knows which leaves were asked for
    a = st.rand(2, requires_grad=True)
    b = st.rand(2, requires_grad=True)
    got = []
    st.autograd.graph.register_multi_grad_hook((a, b), lambda grads: got.append([g is not None for g in grads]))
    st.autograd.grad((a * b).sum(), (b,))
    assert got == [[False, True]]


def test_gradient_edges_are_torchs():
    for lib in (torch, st):
        a = lib.rand(2, requires_grad=True)
        b = a * 2
        edge = lib.autograd.graph.get_gradient_edge(b)
        assert edge.node is b.grad_fn and edge.output_nr == 0 and edge.ownership_token is None
        leaf = lib.autograd.graph.get_gradient_edge(a)
        assert type(leaf.node).__name__ == "AccumulateGrad" and leaf.node is b.grad_fn.next_functions[0][0]
        with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor that "
                                               "does not require gradients"):
            lib.autograd.graph.get_gradient_edge(lib.rand(2))


def test_increment_version_invalidates_saved_values_as_torch():
    words = []
    for lib in (torch, st):
        a = lib.rand(3, requires_grad=True)
        b = a.clone()
        v = b._version
        out = (b * b).sum()
        lib.autograd.graph.increment_version([b])
        assert b._version == v + 1
        with pytest.raises(RuntimeError) as e:
            out.backward()
        words.append(str(e.value).split(";")[0].replace(lib.__name__ + ".", ""))
    assert words[0] == words[1]
    with pytest.raises(TypeError, match="increment_version"):
        st.autograd.graph.increment_version([1])


def test_bad_arguments():
    a = st.rand(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got every"):
        st.autograd.graph.register_multi_grad_hook((a,), print, mode="every")
    with pytest.raises(TypeError, match="must be callable"):
        st.autograd.graph.register_multi_grad_hook((a,), 3)
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        from strided.autograd.graph_task import will_engine_execute_node

        will_engine_execute_node((a * 2).grad_fn)
    from strided.autograd.graph_task import current_graph_task_id

    assert current_graph_task_id() == -1


@pytest.mark.parametrize("call,words", [
    (lambda g, a: g.register_multi_grad_hook((a, 3), print), r"tensors\[1\] must be a Tensor, not int"),
    (lambda g, a: g.register_multi_grad_hook(a, print), "argument 'tensors' must be a sequence of Tensors, not Tensor"),
    (lambda g, a: g.get_gradient_edge(3), "argument 'tensor' must be Tensor, not int"),
    (lambda g, a: g.increment_version(3), "expected a Tensor or an iterable of Tensors, got int"),
])
def test_wrong_argument_types_are_named(call, words):
    with pytest.raises(TypeError, match=words):
        call(st.autograd.graph, st.rand(2, requires_grad=True))
