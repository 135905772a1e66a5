"""A Ray cluster of local nodes for the tests: ``ray start`` on 127.0.0.1 with free ports, its own temp dir and token
authentication (Ray 2.60's default for ``ray start``), each node stopped by its own process group, never by a
blanket ``ray stop`` (other Ray sessions may run on this machine)."""
from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the head's GCS declares a node dead after this many failed health checks of this timeout (Ray's defaults: 5 of
# 10 s): on 2 busy cores a node of the tests may answer late; it is not dead, and a dead one fails the tests anyway
HEALTH_CHECK = {"RAY_health_check_failure_threshold": "20", "RAY_health_check_timeout_ms": "30000"}
NODE_DEATH = r"[Hh]ealth check failed|[Nn]ode is dead|death reason|OOM|out of memory"  # the GCS's lines on it


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
                        RAY_USAGE_STATS_ENABLED="0", **HEALTH_CHECK)
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
        raise TimeoutError(f"the cluster did not reach {cpus} CPUs:\n{self.describe()}")

    def describe(self) -> str:
        """What a failing test prints about the cluster: each node's state (and why it died), ``ray status`` (used
        and pending resources), the GCS's lines about dead nodes or workers, and the end of every job's driver log."""
        parts = []
        nodes = subprocess.run(["ray", "list", "nodes", "--address", self.dashboard, "--format", "json", "--detail"],
                               env=self.env, capture_output=True, text=True, timeout=60)
        try:
            parts.append("nodes: " + "; ".join(f"{n['node_id'][:8]} {n['state']} {n.get('state_message') or ''}"
                                               for n in json.loads(nodes.stdout)))
        except ValueError:
            parts.append(f"ray list nodes: {nodes.stdout[-500:]} {nodes.stderr[-500:]}")
        status = subprocess.run(["ray", "status", "--address", self.gcs_address], env=self.env, capture_output=True,
                                text=True, timeout=60)
        parts.append(status.stdout[-1500:])
        for path in glob.glob(os.path.join(self.dir, "head", "session_latest", "logs", "gcs_server.out")):
            with open(path, errors="replace") as f:
                lines = [x for x in f if re.search(NODE_DEATH, x)]
            parts.append("gcs_server.out:\n" + "".join(lines[-10:]))
        for path in sorted(glob.glob(os.path.join(self.dir, "*", "session_latest", "logs", "job-driver-*.log"))):
            with open(path, errors="replace") as f:
                parts.append(f"{os.path.basename(path)}:\n{f.read()[-2500:]}")
        return "\n".join(parts)

    def stop_jobs(self) -> None:
        """Stops every running job (a test that gave up on its job leaves the cluster free for the next test)."""
        out = subprocess.run(["ray", "list", "jobs", "--address", self.dashboard, "--format", "json", "--detail"],
                             env=self.env, capture_output=True, text=True, timeout=60).stdout
        jobs = json.loads(out) if out.lstrip().startswith("[") else []
        for job in jobs:
            if job.get("status") in ("PENDING", "RUNNING") and job.get("submission_id"):
                subprocess.run(["ray", "job", "stop", "--address", self.dashboard, job["submission_id"]],
                               env=self.env, capture_output=True, text=True, timeout=60)

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
