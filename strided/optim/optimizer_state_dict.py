"""An optimizer's ``state_dict`` and ``load_state_dict``, as torch's: parameters become their index in the
optimizer's order, the groups keep their options (and ``param_names``: Note [Named parameters] in optimizer.py),
and loaded state tensors follow their parameter's device and dtype."""

from __future__ import annotations

from collections import defaultdict

from .. import dtypes as dt
from ..tensor import Tensor

__all__ = ["OptimizerStateDictMixin"]


class OptimizerStateDictMixin:
    """``state_dict`` / ``load_state_dict`` of ``Optimizer`` (its ``param_groups``, ``state``, ``defaults`` and
    hooks)."""

    def state_dict(self) -> dict:
        """``{'state': {index: state}, 'param_groups': [{..., 'params': [indices]}]}`` as torch."""
        self._run_hooks("_optimizer_state_dict_pre_hooks")
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(group["params"])
            groups.append(packed)
        state = {mapping[id(p)]: v for p, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        replaced = self._run_hooks("_optimizer_state_dict_post_hooks", out)
        return out if replaced is None else replaced

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a ``state_dict()``: state tensors follow their param's device (and dtype, except
        ``step``), as torch's ``_process_value_according_to_param_policy``."""
        state_dict = _copy_sd(state_dict)
        replaced = self._run_hooks("_optimizer_load_state_dict_pre_hooks", state_dict)
        if replaced is not None:
            state_dict = replaced
        groups = self.param_groups
        saved = state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old: p for g, s in zip(groups, saved) for old, p in zip(s["params"], g["params"])}
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = {key: self._cast_state(p, key, val) for key, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, s in zip(groups, saved):
            ng = dict(s)
            ng["params"] = group["params"]
            if "param_names" in group and "param_names" not in ng:  # Note [Named parameters]
                ng["param_names"] = group["param_names"]
            new_groups.append(ng)
        self.state = state
        self.param_groups = new_groups
        self._run_hooks("_optimizer_load_state_dict_post_hooks")

    def _cast_state(self, param, key, value):
        if not isinstance(value, Tensor):
            return value
        if key == "step":
            fused = self.defaults.get("fused") or self.defaults.get("capturable")
            return value.to(dtype=dt.float32, device=param.device) if fused else value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)


def _copy_sd(sd):
    """A copy of a state dict whose tensors are cloned (Tensor has no __deepcopy__ contract here)."""
    def clone(x):
        if isinstance(x, Tensor):
            return x.clone()
        if isinstance(x, dict):
            return {k: clone(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clone(v) for v in x]
        if isinstance(x, tuple):
            return tuple(clone(v) for v in x)
        return x

    return clone(sd)
