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
