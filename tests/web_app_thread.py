"""An aiohttp application served on a free local port from a thread with its own event loop, for the browser tests
(tests/test_web_play_browser.py, tests/test_draft_browser.py): the test drives Chromium from its own thread while the
server answers.

    server = AppThread(lambda: make_app(...))   # the factory runs on the server's thread, its loop set
    server.base_url                              # "http://127.0.0.1:<port>"
    server.loop                                  # the server's loop (for call_soon_threadsafe and the like)
    server.stop()                                # the app cleaned up (its on_shutdown run), the loop closed
"""
from __future__ import annotations

import asyncio
import threading

START_TIMEOUT_S = 30.0  # the app is up well within this; a server that is not is an error, never a hung test
STOP_TIMEOUT_S = 30.0


class AppThread:
    """The aiohttp application that `make_app()` returns, on 127.0.0.1 at a free port, in a daemon thread."""

    def __init__(self, make_app):
        self._make_app = make_app
        self._error: BaseException | None = None
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.started.wait(START_TIMEOUT_S):
            raise RuntimeError(f"the test server did not start within {START_TIMEOUT_S:g} s")
        if self._error is not None:
            raise RuntimeError(f"the test server did not start: {self._error!r}") from self._error

    def _run(self):
        from aiohttp import web
        asyncio.set_event_loop(self.loop)
        try:
            self.runner = web.AppRunner(self._make_app(), access_log=None)
            self.loop.run_until_complete(self.runner.setup())
            self.loop.run_until_complete(web.TCPSite(self.runner, "127.0.0.1", 0).start())
            self.base_url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        except BaseException as e:  # told to the test's thread by __init__
            self._error = e
            self.started.set()
            self.loop.close()
            return
        self.started.set()
        self.loop.run_forever()
        self.loop.close()

    def stop(self):
        """Cleans the app up on its loop (its on_shutdown handlers run: pages are closed), then stops the loop."""
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(STOP_TIMEOUT_S)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STOP_TIMEOUT_S)
