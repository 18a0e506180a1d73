"""``strided.nn.modules.module``: torch's import path of ``Module`` and the global ``register_module_*`` hooks."""

from ..module import Module, RemovableHandle
from ..module_hooks import (
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_parameter_registration_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook"]
