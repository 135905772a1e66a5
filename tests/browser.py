"""A small driver of headless Chromium for the browser tests: the DevTools protocol over Chromium's debugging pipe
(``--remote-debugging-pipe``: NUL-terminated JSON messages on file descriptors 3 and 4), so no WebDriver and no
websocket package is needed.

    with Browser() as b:
        b.open("file:///tmp/game.html")
        b.evaluate("viewer.state.t")
        b.click(x, y); b.key("ArrowRight"); b.screenshot("/tmp/shot.png")

``chromium_path()`` is None when no Chromium is installed (the tests then skip; ``.ci/run`` installs it).
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe")
REPLY_TIMEOUT_S = 60.0  # a command without a reply by then is an error, never a hung test
KEY_CODES = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, " ": 32, "Home": 36, "End": 35}


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, width: int = 1400, height: int = 1000):
        path = chromium_path()
        if path is None:
            raise BrowserError(f"no Chromium found (looked for {list(CHROMIUM_NAMES)})")
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="openfive-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # above 10, so that the child's dup2 onto 3 and 4 never meets them
        child_r, child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome_r, from_chrome_w))

        def pipes_on_3_and_4():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        self.proc = subprocess.Popen([path, *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--window-size={width},{height}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=pipes_on_3_and_4)
        for fd in (to_chrome_r, from_chrome_w, child_r, child_w):
            os.close(fd)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=True)

    # ---- the protocol ------------------------------------------------------------------------------------------------
    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {REPLY_TIMEOUT_S} s")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the debugging pipe (did it crash?)")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    # ---- a page --------------------------------------------------------------------------------------------------
    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'",
             timeout_s: float = 60.0):
        """Navigates to `url` and waits until the JavaScript expression `ready` is true."""
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(f"Boolean({ready})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"{url}: not ready ({ready}) after {timeout_s} s")
            time.sleep(0.05)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able); a thrown error is a BrowserError."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      session=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise BrowserError(f"{expression!r}: {d.get('exception', {}).get('description') or d.get('text')}")
        return r["result"].get("value")

    def click(self, x: float, y: float):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                      session=True)

    def click_element(self, selector: str):
        """A real mouse click at the centre of the first element matching a CSS selector."""
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                            f".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()")
        self.click(*box)

    def key(self, key: str):
        code = KEY_CODES.get(key, ord(key.upper()) if len(key) == 1 else 0)
        params = {"key": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", **params}, session=True)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", **params}, session=True)

    def screenshot(self, path: str) -> str:
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    # ---- lifetime ------------------------------------------------------------------------------------------------
    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
