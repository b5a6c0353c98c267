"""A throwaway JupyterLab server for the browser tests: the project's own environment, bound to
127.0.0.1 on a free port with a random token, serving a temporary folder.

Everything JupyterLab writes (settings, workspaces, runtime files, checkpoints) goes into that
folder, so a test neither reads nor changes the user's Jupyter configuration, and the notebooks it
opens are copies.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The jupyter command of the environment that runs the tests (the project's .venv).
JUPYTER = Path(sys.executable).with_name("jupyter")


@dataclass(frozen=True)
class LabServer:
    """A running server: where it listens, and its token."""

    url: str
    token: str

    def tree_url(self, name: str) -> str:
        """The address that opens the notebook ``name`` (relative to :attr:`root`) in JupyterLab."""
        return f"{self.url}lab/tree/{name}?token={self.token}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(url: str, token: str, process: subprocess.Popen, timeout: float,
                   log: Path) -> None:
    """Poll the server's status API until it answers, or fail naming the server's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {process.returncode}; see {log}")
        try:
            request = urllib.request.Request(f"{url}api/status",
                                             headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer at {url} within {timeout:.0f} s; see {log}")


@contextmanager
def jupyterlab(notebooks: list[Path], workdir: Path, timeout: float = 90) -> Iterator[LabServer]:
    """Copy ``notebooks`` into ``workdir/root`` and serve that folder with JupyterLab.

    Args:
        notebooks: Notebooks to copy (the originals are never opened).
        workdir: An empty temporary folder for the copies and Jupyter's own files.
        timeout: Seconds to wait for the server to answer.

    Yields:
        The running server; on exit it is shut down with its kernels. Its output stays in
        ``workdir/jupyterlab.log``.
    """
    root = workdir / "root"
    root.mkdir()
    for notebook in notebooks:
        shutil.copy(notebook, root / notebook.name)
    # Neither news nor an update check (a request to the internet, and a pop-up over the page).
    notifications = workdir / "settings" / "@jupyterlab" / "apputils-extension"
    notifications.mkdir(parents=True)
    (notifications / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = {**os.environ,
           "JUPYTER_CONFIG_DIR": str(workdir / "config"),
           "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(workdir / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(workdir / "workspaces")}
    port, token = free_port(), secrets.token_hex(16)
    command = [str(JUPYTER), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--expose-app-in-browser"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI runners often run as root
    log_path = workdir / "jupyterlab.log"
    log = log_path.open("wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_up(url, token, process, timeout, log_path)
        yield LabServer(url=url, token=token)
    finally:
        process.terminate()  # SIGTERM: the server shuts its kernels down, then exits
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
