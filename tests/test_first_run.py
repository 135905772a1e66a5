"""What a newcomer sees on a first run: the engine's compile says what it does, Ray's noise is filtered (and only
its noise), and nothing starts Ray at exit."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import types

from moba.env import compiled
from policies.agents.scripted import ScriptedAgent
from training import ray_output

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_cold_compile_says_what_it_does_and_a_warm_one_is_silent(monkeypatch):
    lines = []
    monkeypatch.setattr(compiled, "is_cached", lambda dispatcher: False)
    compiled.compile_ahead(log=lines.append)
    assert len(lines) == 2 and "Compiling the game engine" in lines[0] and lines[1].startswith("Compiled in")
    lines.clear()
    monkeypatch.setattr(compiled, "is_cached", lambda dispatcher: True)
    compiled.compile_ahead(log=lines.append)
    assert lines == []


def test_the_compiled_entry_points_are_cached_after_a_game_step():
    bot = ScriptedAgent()
    compiled.compile_ahead(log=lambda line: None, agents=[bot])
    assert all(compiled.is_cached(f) for f in compiled.ENTRY_POINTS + bot.compiled)
    assert bot._state, "the bot decided in that step"


def test_noise_records_are_dropped_and_every_other_record_kept():
    ray_output.drop_noise_records()
    ray_output.drop_noise_records()  # idempotent: one filter per logger
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Keep()
    for name, prefix in ray_output.NOISE_RECORDS:
        logger = logging.getLogger(name)
        assert sum(isinstance(f, ray_output.DropMessages) for f in logger.filters) == 1
        logger.addHandler(handler)
        try:
            logger.warning(prefix + " (details)")
            logger.warning("a real problem: " + prefix)
        finally:
            logger.removeHandler(handler)
    assert seen == ["a real problem: " + prefix for _, prefix in ray_output.NOISE_RECORDS]


def test_a_worker_stopped_while_finalizing_is_silent_and_other_errors_are_reported(monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "__unraisablehook__", reported.append)
    exit_while_finalizing = types.SimpleNamespace(exc_value=SystemExit(1))
    real_error = types.SimpleNamespace(exc_value=ValueError("broken __del__"))
    ray_output._ignore_exit_while_finalizing(exit_while_finalizing)
    ray_output._ignore_exit_while_finalizing(real_error)
    assert reported == [real_error]


def test_the_trueskill_actor_cleanup_does_not_start_ray_at_exit():
    """The exit handler that kills the TrueSkill actor runs when Ray may already be down: it must not call into Ray
    then (ray.kill would start a new local Ray instance only to kill nothing)."""
    code = ("import ray\n"
            "from callbacks.trueskill_rating import kill_at_exit\n"
            "kill_at_exit(object())\n"
            "print('initialized' if ray.is_initialized() else 'not started')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "not started"


def test_quiet_ray_env_keeps_a_users_own_settings(monkeypatch):
    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", "1")
    monkeypatch.delenv("RAY_DEDUP_LOGS_SKIP_REGEX", raising=False)
    monkeypatch.setenv("RAY_ADDRESS", "ray://cluster:10001")
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    ray_output.quiet_ray_env()
    assert os.environ["RAY_AIR_NEW_OUTPUT"] == "1"
    assert "max_restarts" in os.environ["RAY_DEDUP_LOGS_SKIP_REGEX"]
    assert "RAY_AUTH_MODE" not in os.environ  # a cluster's own authentication is left alone
