"""The ``precis`` command line. Every command calls the same library functions as the API.

``main()`` is the console-script entry point: it turns every :class:`~precis.PrecisError`
into a one-line message on stderr and exit code 2 (never a traceback for user error).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    import click

    from precis.cli._app import cli
    from precis.errors import PrecisWarning

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: object,
             **kwargs: object) -> None:
        if issubclass(category, PrecisWarning):  # one line, as errors are
            click.echo(f"precis: warning: {message}", err=True)
        else:
            shown(message, category, *args, **kwargs)  # type: ignore[arg-type]

    warnings.showwarning = show
    try:
        return _run(cli, argv)
    finally:
        warnings.showwarning = shown


def _run(cli: object, argv: Sequence[str] | None) -> int:
    import click

    from precis.errors import PrecisError

    assert isinstance(cli, click.Group)
    try:
        result = cli.main(args=list(argv) if argv is not None else None,
                          prog_name="precis", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:  # one line, as precis's own errors (click prints three)
        command = exc.ctx.command_path if exc.ctx is not None else "precis"
        click.echo(f"precis: error: {exc.format_message()} (see `{command} --help`)",
                   err=True)
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except PrecisError as exc:
        click.echo(f"precis: error: {exc}", err=True)
        return 2
    except BrokenPipeError:  # e.g. `precis inspect x | head`
        sys.stderr.close()
        return 0
    return int(result) if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
