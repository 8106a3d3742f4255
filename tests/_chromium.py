"""A headless Chromium driven through the DevTools protocol over a pipe (no new dependency).

`--remote-debugging-pipe` makes Chromium read protocol commands from its fd 3 and write
replies and events to its fd 4, one JSON message per NUL-terminated chunk: no port, no
websocket. `Browser.open(path)` loads a file in a fresh page with the console, log and
network domains on; `key(name)` presses a key through `Input.dispatchKeyEvent` (what a
user's keyboard does); `eval(js)` returns a value; `problems()` lists the console
errors, uncaught exceptions, failed loads and every request for anything but the page
itself. Every wait is bounded (`TIMEOUT` seconds): a hang is a failure, not a stuck test.

Chromium: `$TAPEGRAD_CHROMIUM`, else `chromium`, `chromium-browser` or `google-chrome` on
PATH (CI installs Debian's `chromium` in .ci/run).
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT = 30.0

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-dev-shm-usage", "--remote-debugging-pipe"]

KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40, "Home": 36,
        "End": 35, " ": 32}


def find():
    """The Chromium executable, or None."""
    env = os.environ.get("TAPEGRAD_CHROMIUM")
    if env:
        return shutil.which(env)  # None when it names nothing executable
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="tg-chromium-")
        to_r, self._to_w = os.pipe()      # commands: we write, Chromium reads as fd 3
        self._from_r, from_w = os.pipe()  # replies: Chromium writes fd 4, we read
        # the child's ends above fd 9, so that `3<&a 4>&b` cannot overwrite one with the other
        to_r, from_w = _high(to_r), _high(from_w)
        # a small Python trampoline puts the two pipe ends on fds 3 and 4, then becomes
        # Chromium (a shell cannot: dash takes single-digit descriptors only)
        boot = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); "
                "os.execv(sys.argv[3], sys.argv[3:])")
        args = [exe] + FLAGS + [f"--user-data-dir={self.profile}"]
        self.proc = subprocess.Popen([sys.executable, "-c", boot, str(to_r), str(from_w)] + args,
                                     pass_fds=(to_r, from_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.session = None
        self.page_url = None

    # ---- the protocol ---------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium: no reply within the time limit")
            ready, _, _ = select.select([self._from_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_r, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium exited (code {self.proc.poll()})")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method, params=None, session=True, timeout=TIMEOUT):
        """Send one command; return its result (raise on a protocol error)."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"chromium: {method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m.get("method") == method:
                return m
        while True:
            m = self._read_message(deadline)
            self.events.append(m)
            if m.get("method") == method:
                return m

    # ---- what a test does -----------------------------------------------------------
    def open(self, path):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        self.page_url = "file://" + os.path.abspath(path)
        self.send("Page.navigate", {"url": self.page_url})
        self.wait_event("Page.loadEventFired")

    def key(self, name):
        code = KEYS[name]
        base = {"key": name, "code": "Space" if name == " " else name,
                "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **base})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})

    def eval(self, expression):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"chromium: {expression!r} raised: {res['exceptionDetails']}")
        return res["result"].get("value")

    def problems(self):
        """Console errors and warnings, uncaught exceptions, error log entries, and any
        request for something other than the page (the page must need nothing else)."""
        out = []
        for m in self.events:
            p = m.get("params", {})
            meth = m.get("method")
            if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning",
                                                                         "assert"):
                out.append(f"console.{p['type']}: {p.get('args')}")
            elif meth == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails')}")
            elif meth == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif meth == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if url != self.page_url and not url.startswith("data:"):
                    out.append(f"request: {url}")
        return out

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False, timeout=5)
                except Exception:  # noqa: BLE001 - it may close before replying
                    pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        finally:
            os.close(self._to_w)
            os.close(self._from_r)
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _high(fd):
    """The same pipe end as a descriptor numbered 10 or more (the low one closed)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high
