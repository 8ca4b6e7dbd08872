"""Options shared by the commands that read a conversation (FILE, --format, --pick) and by
those that analyse one (--llm-vote), and the model client the LLM options build."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from precis.formats import Collection, load_all

if TYPE_CHECKING:
    from precis.analysis.classify import TypeVoter
    from precis.llm import ChatClient

__all__ = ["WatchedVoter", "chat_client", "conversation_input", "llm_vote_option",
           "read_collection", "type_voter"]

F = TypeVar("F", bound=Callable[..., Any])


def conversation_input(func: F) -> F:
    """Add FILE (``-`` for stdin), ``--format`` and ``--pick`` to a command."""
    func = click.option(
        "--pick",
        "-p",
        metavar="N|ID",
        default=None,
        help="Select one conversation from a file that holds several: 0-based index or id "
        "(`precis inspect FILE` lists them).",
    )(func)
    func = click.option(
        "--format",
        "-f",
        "format_name",
        metavar="NAME",
        default=None,
        help="Force the input format instead of detecting it (see `precis formats`).",
    )(func)
    func = click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(func)
    return func


def read_collection(file: str, format_name: str | None) -> Collection:
    """Load every conversation in FILE (``-`` reads standard input)."""
    if file == "-":
        return load_all(sys.stdin.buffer, format_name, name="<stdin>")
    return load_all(file, format_name)


def llm_vote_option(func: F) -> F:
    """Add ``--llm-vote``: a model votes on the fragment types the rules are unsure of."""
    return click.option(
        "--llm-vote",
        is_flag=True,
        help="Ask the OpenAI-compatible model at $PRECIS_LLM_URL ($PRECIS_LLM_MODEL, "
        "$PRECIS_LLM_KEY) about the fragment types the rules are unsure of (confidence "
        "below 0.7); needs precis[remote]. A failing model leaves the rule answers.",
    )(func)


def type_voter(enabled: bool) -> WatchedVoter | None:
    """The model layer ``--llm-vote`` asks for, or None. A missing URL or model name is a
    :class:`~precis.errors.ConfigError` that names the variable; a missing ``httpx`` a
    :class:`~precis.errors.MissingDependencyError` with the pip command."""
    if not enabled:
        return None
    from precis.llm import LLMTypeVoter

    return WatchedVoter(LLMTypeVoter(chat_client("--llm-vote")))


def chat_client(option: str) -> ChatClient:
    """The client of the model at ``$PRECIS_LLM_URL`` for ``option``: a
    :class:`~precis.errors.ConfigError` naming the variables to set when the URL or the
    model is not set, a :class:`~precis.errors.MissingDependencyError` with the pip command
    when ``httpx`` is missing."""
    from precis.llm import client_from_env

    return client_from_env(option)


class WatchedVoter:
    """A voter that remembers why it failed: classification keeps the rule answers when the
    model fails (by design), and the command says so on stderr (:meth:`warn`)."""

    def __init__(self, voter: TypeVoter) -> None:
        self.voter = voter
        self.name = voter.name
        self.error: Exception | None = None

    def vote(self, items: Any, candidates: Any) -> Any:
        try:
            return self.voter.vote(items, candidates)
        except Exception as exc:
            self.error = exc
            raise

    def warn(self) -> None:
        """Say on stderr when the model failed, or answered junk for most fragments (its
        answers named no type: the rule answers stood for them)."""
        if self.error is not None:
            click.echo(f"precis: warning: the model did not vote ({self.error}); the rule "
                       "answers stand", err=True)
            return
        asked = getattr(self.voter, "asked", 0)
        unreadable = getattr(self.voter, "unreadable", 0)
        if asked and unreadable * 2 > asked:
            click.echo(f"precis: warning: the model's answers named no type for {unreadable} "
                       f"of {asked} fragments (not the JSON object asked for); the rule "
                       "answers stand for them", err=True)
