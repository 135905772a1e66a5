"""The game-playing tools' process pool (policies/league/series.py game_pool): its workers end with the process that
started them, so a tool stopped by SIGTERM or SIGKILL leaves no game playing on."""
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = """
import os, sys, time
from policies.league.series import game_pool

if __name__ == "__main__":
    pool = game_pool(1)
    print(pool.submit(os.getpid).result(), flush=True)
    pool.submit(time.sleep, 120)  # a long game in the worker
    time.sleep(120)
"""


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie waits for whoever reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_game_pool_workers_end_when_the_tool_is_killed(tmp_path):
    script = tmp_path / "tool.py"
    script.write_text(TOOL)
    tool = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": REPO})
    try:
        worker = int(tool.stdout.readline())
        assert alive(worker)
        time.sleep(1.5)
        assert alive(worker), "the worker ended while its tool still ran"
        os.kill(tool.pid, signal.SIGKILL)  # no cleanup runs in the tool
        tool.wait(10)
        deadline = time.monotonic() + 15
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(worker), "the pool's worker played on after its tool was killed"
    finally:
        if tool.poll() is None:
            tool.kill()
