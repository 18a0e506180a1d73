"""``strided.utils.benchmark``: torch.utils.benchmark's ``Timer``, ``Measurement`` and ``Compare`` for timing
strided (and torch) code side by side; the Timer synchronizes the GPU before each reading."""

from .common import Measurement, TaskSpec, select_unit
from .compare import Compare
from .timer import Language, Timer

__all__ = ["Timer", "Measurement", "Compare", "TaskSpec", "Language", "select_unit"]
