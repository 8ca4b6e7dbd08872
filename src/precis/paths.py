"""Where precis keeps user state: one directory, relocatable with ``PRECIS_HOME``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["precis_home"]


def precis_home(create: bool = False) -> Path:
    """The user-state directory.

    ``$PRECIS_HOME`` if set; otherwise the platform's user data directory
    (``$XDG_DATA_HOME/precis`` or ``~/.local/share/precis`` on Linux,
    ``~/Library/Application Support/precis`` on macOS, ``%APPDATA%\\precis`` on Windows).
    """
    env = os.environ.get("PRECIS_HOME")
    if env:
        home = Path(env).expanduser()
    elif sys.platform == "darwin":
        home = Path.home() / "Library" / "Application Support" / "precis"
    elif os.name == "nt":
        home = Path(os.environ.get("APPDATA", Path.home())) / "precis"
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        home = (Path(xdg) if xdg else Path.home() / ".local" / "share") / "precis"
    if create:
        home.mkdir(parents=True, exist_ok=True)
    return home
