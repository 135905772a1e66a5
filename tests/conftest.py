"""Shared pytest setup: the repository root on sys.path (also set in pytest.ini) and the hypothesis profile."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("moba", deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.load_profile("moba")
except ImportError:  # pragma: no cover
    pass


# ---- training tests (tests/test_training_*.py) ----------------------------------------------------------------------
import pytest  # noqa: E402


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray session (2 CPUs, no dashboard) shared by every test that needs Ray; workers find the
    repository's packages through PYTHONPATH. Not started if Ray is already up (e.g. by a caller)."""
    import ray
    import torch

    torch.set_num_threads(1)
    started = False
    if not ray.is_initialized():
        pythonpath = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": pythonpath}})
        started = True
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture
def no_home_results(tmp_path, monkeypatch):
    """A standalone Algorithm (built outside Tune) makes a log dir in ~/ray_results: put it under tmp_path."""
    import ray.tune.trainable.trainable as trainable
    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path / "ray_results"))
    return tmp_path
