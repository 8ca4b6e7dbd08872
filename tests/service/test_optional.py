"""Without the server extra, `precis serve` and `precis mcp` say what to install."""

from __future__ import annotations

import sys

import pytest

from precis.cli import main


@pytest.mark.parametrize(("command", "module"), [("serve", "fastapi"), ("serve", "uvicorn"),
                                                 ("mcp", "mcp")])
def test_a_missing_server_package_gives_the_install_hint(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str,
        module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert f"'{module}'" in err and "pip install 'precis[server]'" in err
