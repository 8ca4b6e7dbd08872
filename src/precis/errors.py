"""The one exception tree of precis.

Every error precis raises on purpose is a :class:`PrecisError`. Errors caused by what the
user gave us (a file, a config value, a selector) are :class:`InputError` subclasses; the CLI
prints them without a traceback and exits with code 2, the service answers HTTP 4xx::

    PrecisError
    ├── InputError                  bad input from the caller (CLI exit 2, HTTP 4xx)
    │   ├── InputNotFoundError      the path does not exist or is not a file
    │   ├── InputTooLargeError      over the size limit (``PRECIS_MAX_INPUT_BYTES``)
    │   ├── EmptyInputError         nothing but white space
    │   ├── EncodingError           not UTF-8 text, or a binary file
    │   ├── JSONSyntaxError         malformed JSON / JSONL, with line and column
    │   ├── NestingTooDeepError     JSON nested deeper than precis accepts
    │   ├── UnknownFormatError      no conversation format matched
    │   ├── FormatError             a known format with a wrong structure (names the message)
    │   ├── SelectionError          ``pick`` names no conversation, or one is required
    │   ├── QueryError              a memory search query or filter that cannot be used
    │   ├── NotFoundError           a memory card (or other stored item) id that does not exist
    │   └── ConflictError           a write that would replace what exists or changed meanwhile
    ├── ConfigError                 an invalid setting (names the key)
    ├── TokenizerError              a tokenizer could not be loaded or used
    ├── StoreError                  the memory store cannot be opened, read or written
    ├── EmbeddingError              an embedder failed (model files, endpoint, bad answer)
    ├── LLMError                    an LLM endpoint failed (down, timeout, HTTP error, junk answer)
    └── MissingDependencyError      an optional extra is not installed (gives the pip command)

Warnings precis gives (a fallback it took, a result it had to degrade) are
:class:`PrecisWarning`, a ``UserWarning``; the CLI prints them as ``precis: warning: ...``.

Lower-level errors (``json.JSONDecodeError``, ``UnicodeDecodeError``, ``OSError``,
``RecursionError``) are translated into this tree where precis meets them; they never escape
to the caller for user error.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ConflictError",
    "EmbeddingError",
    "EmptyInputError",
    "EncodingError",
    "FormatError",
    "InputError",
    "InputNotFoundError",
    "InputTooLargeError",
    "JSONSyntaxError",
    "LLMError",
    "MissingDependencyError",
    "NestingTooDeepError",
    "NotFoundError",
    "PrecisError",
    "PrecisWarning",
    "QueryError",
    "SelectionError",
    "StoreError",
    "TokenizerError",
    "UnknownFormatError",
]


class PrecisError(Exception):
    """Base class of every error precis raises on purpose.

    ``where`` names the place of the problem (a file, ``line 3, column 7``, ``message 12``);
    ``str(err)`` gives ``"<where>: <message>"`` so it can be printed as is.
    """

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InputError(PrecisError):
    """The caller's input is wrong (a file, data, a selector)."""


class InputNotFoundError(InputError):
    """The input path does not exist, or is not a regular file."""


class InputTooLargeError(InputError):
    """The input is over the size limit."""


class EmptyInputError(InputError):
    """The input holds nothing but white space."""


class EncodingError(InputError):
    """The input is not UTF-8 text (binary data or another encoding)."""


class JSONSyntaxError(InputError):
    """Malformed JSON or JSONL; ``line`` and ``column`` are 1-based."""

    def __init__(
        self, message: str, *, line: int, column: int, source: str | None = None
    ) -> None:
        self.line = line
        self.column = column
        where = f"{source}:{line}:{column}" if source else f"line {line}, column {column}"
        super().__init__(message, where=where)


class NestingTooDeepError(InputError):
    """JSON nested deeper than precis accepts."""


class UnknownFormatError(InputError):
    """No known conversation format matched the input."""


class FormatError(InputError):
    """The input looks like a known format but its structure is wrong."""


class SelectionError(InputError):
    """A ``pick`` selector names no conversation, or one is needed and missing."""


class QueryError(InputError):
    """A memory search query or filter that cannot be used (empty, too long, bad date)."""


class NotFoundError(InputError):
    """A stored item (a memory card, an offloaded payload) id that does not exist."""


class ConflictError(InputError):
    """A write that would replace something that exists, or that another writer changed
    meanwhile (a session id taken, a session saved by another service worker)."""


class ConfigError(PrecisError):
    """An invalid configuration value."""


class TokenizerError(PrecisError):
    """A tokenizer could not be loaded or used."""


class StoreError(PrecisError):
    """The memory store cannot be opened, read or written (names the file)."""


class EmbeddingError(PrecisError):
    """An embedder failed: missing model files, an endpoint error, or a malformed answer."""


class LLMError(PrecisError):
    """An LLM endpoint failed: unreachable, too slow, an HTTP error after the retries, or an
    answer that is not a usable completion (not JSON, no choices, empty or mistyped content).
    Callers that summarise fall back to the rule engine on it."""


class MissingDependencyError(PrecisError):
    """An optional dependency is missing; the message says which extra to install.

    ``install`` replaces the default ``pip install 'precis[<extra>]'`` hint where one extra is
    not enough (a package that must be installed without its dependencies, say).
    """

    def __init__(
        self, package: str, extra: str, purpose: str, *, install: str | None = None
    ) -> None:
        self.package = package
        self.extra = extra
        command = install or f"pip install 'precis[{extra}]'"
        super().__init__(
            f"{purpose} needs the optional package {package!r}; install it with: {command}"
        )


class PrecisWarning(UserWarning):
    """A fallback precis took or a degraded result (the estimator instead of a tokenizer
    that cannot be loaded, say); the work went on."""
