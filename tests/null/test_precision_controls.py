"""Precision and determinism switches, TunableOp's API and results file: no device, no nvmath."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import strided
import strided.backends.cuda.matmul as matmul_flags
from strided.backends import determinism
from strided.backends.cuda import gemm_tuning
from strided.cuda import tunable


@pytest.fixture(autouse=True)
def _restore():
    state = dict(matmul_flags._state)
    det = dict(determinism._state)
    tune = dict(vars(gemm_tuning.STATE))
    yield
    matmul_flags._state.update(state)
    determinism._state.update(det)
    vars(gemm_tuning.STATE).update(tune)


def test_import_strided_imports_no_cuda_or_nvmath():
    code = ("import sys, strided, strided.cuda.tunable; "
            "bad = [m for m in sys.modules if m.startswith(('nvmath', 'cuda.'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_cuda_utils_testing_load_on_first_use():
    # Note [Lazy submodules]: st.cuda works after a plain `import strided`, without importing
    # strided.cuda (or the driver) at import time
    code = ("import sys, strided as st; "
            "assert 'strided.cuda' not in sys.modules and 'strided.testing' not in sys.modules; "
            "assert st.cuda.memory_allocated is sys.modules['strided.cuda'].memory_allocated; "
            "assert st.utils.__name__ == 'strided.utils' and st.testing.__name__ == 'strided.testing'; "
            "bad = [m for m in sys.modules if m.startswith(('nvmath', 'cuda.'))]; assert not bad, bad; "
            "import pytest; pytest.raises(AttributeError, lambda: st.no_such_module)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_matmul_flags_defaults_as_torch():
    m = strided.backends.cuda.matmul
    assert m is matmul_flags
    assert m.allow_tf32 is False
    assert m.allow_fp16_reduced_precision_reduction is True
    assert m.allow_bf16_reduced_precision_reduction is True
    assert strided.get_float32_matmul_precision() == "highest"


def test_allow_tf32_and_precision_are_one_switch():
    m = matmul_flags
    strided.set_float32_matmul_precision("high")
    assert m.allow_tf32 is True
    strided.set_float32_matmul_precision("medium")
    assert m.allow_tf32 is True and strided.get_float32_matmul_precision() == "medium"
    strided.set_float32_matmul_precision("highest")
    assert m.allow_tf32 is False
    m.allow_tf32 = True
    assert strided.get_float32_matmul_precision() == "high"
    m.allow_tf32 = False
    assert strided.get_float32_matmul_precision() == "highest"


def test_unknown_precision_warns_and_changes_nothing():
    with pytest.warns(UserWarning, match="low is not one of 'highest', 'high', or 'medium'"):
        strided.set_float32_matmul_precision("low")
    assert strided.get_float32_matmul_precision() == "highest"


def test_reduced_precision_flags_and_unknown_attributes():
    m = matmul_flags
    m.allow_fp16_reduced_precision_reduction = False
    m.allow_bf16_reduced_precision_reduction = False
    assert not m.allow_fp16_reduced_precision_reduction and not m.allow_bf16_reduced_precision_reduction
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf16"):
        m.allow_tf16 = True
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo  # noqa: B018
    with pytest.raises(TypeError, match="allow_tf32 must be a bool"):
        m.allow_tf32 = 1


def test_use_deterministic_algorithms():
    assert strided.are_deterministic_algorithms_enabled() is False
    strided.use_deterministic_algorithms(True)
    assert strided.are_deterministic_algorithms_enabled() is True
    assert strided.is_deterministic_algorithms_warn_only_enabled() is False
    assert strided.get_deterministic_debug_mode() == 2
    strided.use_deterministic_algorithms(True, warn_only=True)
    assert strided.get_deterministic_debug_mode() == 1
    strided.use_deterministic_algorithms(False)
    assert strided.get_deterministic_debug_mode() == 0
    strided.set_deterministic_debug_mode("error")
    assert strided.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not int"):
        strided.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        strided.set_deterministic_debug_mode("sometimes")


def test_alert_not_deterministic_text():
    determinism.alert_not_deterministic("index_add_cuda_")  # off: nothing happens
    strided.use_deterministic_algorithms(True)
    expected = ("index_add_cuda_ does not have a deterministic implementation, but you set "
                "'strided.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
                "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
                "application.")
    with pytest.raises(RuntimeError) as e:
        determinism.alert_not_deterministic("index_add_cuda_")
    assert str(e.value).startswith(expected)
    strided.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        determinism.alert_not_deterministic("index_add_cuda_")
    assert len(w) == 1 and str(w[0].message).startswith(expected)


def test_tunable_api_roundtrip(tmp_path):
    assert tunable.is_enabled() is False
    tunable.enable()
    assert tunable.is_enabled()
    tunable.tuning_enable(False)
    assert not tunable.tuning_is_enabled()
    tunable.set_max_tuning_duration(7)
    tunable.set_max_tuning_iterations(3)
    assert (tunable.get_max_tuning_duration(), tunable.get_max_tuning_iterations()) == (7, 3)
    f = tmp_path / "results.csv"
    tunable.set_filename(str(f))
    assert tunable.get_filename() == str(f)


def test_results_file_roundtrip_and_validators(tmp_path):
    st = gemm_tuning.STATE
    st.results = {}
    st.validators = {"GPU": "Test GPU", "CUBLASLT_VERSION": "130100", "STRIDED_VERSION": "0.1.0"}
    gemm_tuning.record("GemmTunableOp_bf16_NT_e1", "1_2_3", "Default", 0.5)
    gemm_tuning.record("GemmTunableOp_half_TN_e1", "4_5_6", "00ff:1024", 0.25)
    f = tmp_path / "r.csv"
    assert tunable.write_file(str(f))
    text = f.read_text().splitlines()
    assert text[0] == "Validator,GPU,Test GPU"
    assert "GemmTunableOp_bf16_NT_e1,1_2_3,Default,0.500000" in text
    st.results = {}
    assert gemm_tuning.read_file(str(f))
    assert tunable.get_results()[1] == ("GemmTunableOp_half_TN_e1", "4_5_6", "00ff:1024", 0.25)
    st.results = {}
    st.validators = dict(st.validators, GPU="Other GPU")
    with pytest.warns(UserWarning, match="validator GPU is 'Test GPU' in the file but 'Other GPU' here"):
        assert not gemm_tuning.read_file(str(f))
    assert st.results == {}


def test_tuning_keeps_first_choice_on_ties():
    times = {0: 1.0, 1: 1.0, 2: 0.995, 3: 2.0}
    cur = []

    def run(i):
        cur.append(i)

    def timer(fn, n):
        cur.clear()
        fn()
        return times[cur[0]]

    assert gemm_tuning.tune(run, 4, timer)[0] == 0  # within 1%: the heuristic's choice stays
    times[2] = 0.5
    assert gemm_tuning.tune(run, 4, timer) == (2, 0.5)


def test_tuning_spin_kernel_compiles():
    pytest.importorskip("cuda.bindings.nvrtc")
    from strided.backends.cuda.compiler import compile_cubin

    assert len(compile_cubin(gemm_tuning.SPIN_SOURCE, "strided_spin", "sm_90")) > 0
