"""Shared pytest setup: the hypothesis profile and the Ray session of the training tests. The project's packages
import as installed (pip install -r requirements.txt: pyproject.toml, editable) and through pytest.ini's pythonpath;
pytest's rootdir-relative imports find the test helpers (moba_testlib, browser, ...) in this directory."""
import os

from training import ray_output

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the environment app.train gives Ray (token authentication for a local Ray, its console filters), set before any test
# imports Ray: Ray reads it at import and hands it to the processes it starts, so a test that imports app.train (which
# sets it) must not change it halfway through the session
ray_output.quiet_ray_env()

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
