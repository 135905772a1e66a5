"""A Ray cluster of local nodes for the tests: ``ray start`` on 127.0.0.1 with free ports, its own temp dir and token
authentication (Ray 2.60's default for ``ray start``), each node stopped by its own process group, never by a
blanket ``ray stop`` (other Ray sessions may run on this machine)."""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_range(n: int) -> int:
    """The first of n consecutive free ports."""
    for _ in range(200):
        base = 20000 + secrets.randbelow(40000 - n)
        try:
            socks = []
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def wait_for_port(port: int, timeout_s: float, proc: subprocess.Popen) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"`ray start` exited with {proc.returncode}: {proc.stdout.read()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"nothing listens on port {port} after {timeout_s} s")


class LocalCluster:
    """A head node (GCS, dashboard with the job server) and optional worker nodes, all on 127.0.0.1."""

    def __init__(self, head_cpus: int = 1):
        # short: Ray's unix socket paths live under the temp dir (107 characters at most)
        self.dir = tempfile.mkdtemp(prefix="of_", dir="/tmp")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        self.env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16), PYTHONPATH=ROOT,
                        RAY_USAGE_STATS_ENABLED="0")
        self.gcs_port, self.dashboard_port = free_port(), free_port()
        self.nodes: list[subprocess.Popen] = []
        self._start("head", head_cpus, ["--head", "--port", str(self.gcs_port), "--include-dashboard", "true",
                                        "--dashboard-host", "127.0.0.1", "--dashboard-port", str(self.dashboard_port),
                                        "--ray-client-server-port", str(free_port())])
        wait_for_port(self.dashboard_port, 120, self.nodes[0])

    @property
    def gcs_address(self) -> str:
        return f"127.0.0.1:{self.gcs_port}"

    @property
    def dashboard(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    def add_node(self, cpus: int = 1) -> None:
        """A second node joining the head (`ray start --address`), with its own temp dir."""
        self._start(f"node{len(self.nodes)}", cpus, ["--address", self.gcs_address])

    def _start(self, name: str, cpus: int, args: list) -> None:
        base = free_port_range(64)
        cmd = ["nice", "-n", "19", "ray", "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus",
               str(cpus), "--num-gpus", "0", "--temp-dir", os.path.join(self.dir, name), "--disable-usage-stats",
               "--min-worker-port", str(base), "--max-worker-port", str(base + 40),
               "--node-manager-port", str(base + 41), "--object-manager-port", str(base + 42),
               "--dashboard-agent-listen-port", str(base + 43), "--dashboard-agent-grpc-port", str(base + 44),
               "--runtime-env-agent-port", str(base + 45), "--metrics-export-port", str(base + 46),
               "--object-store-memory", str(200 * 1024 * 1024), *args]
        # a session of its own: the node's processes are stopped by their process group
        self.nodes.append(subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True, start_new_session=True))

    def wait_for_cpus(self, cpus: int, timeout_s: float = 120) -> None:
        deadline = time.time() + timeout_s
        out = ""
        while time.time() < deadline:
            out = subprocess.run(["ray", "status", "--address", self.gcs_address], env=self.env, capture_output=True,
                                 text=True, timeout=60).stdout
            if f"/{cpus}.0 CPU" in out:
                return
            time.sleep(1)
        raise TimeoutError(f"the cluster did not reach {cpus} CPUs: {out[-2000:]}")

    def stop(self) -> None:
        for proc in reversed(self.nodes):
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # `ray start --block` stops its node's processes
                proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group is left
            except ProcessLookupError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
