"""Pin the public API: adding or removing an exported name must be deliberate."""

from __future__ import annotations

import precis
import precis.errors


def test_exported_names() -> None:
    assert sorted(precis.__all__) == sorted(
        [
            "Collection", "CompactionDecision", "ConfigError", "Conversation", "ConversationInfo",
            "EmbeddingError", "EmptyInputError", "EncodingError", "FormatError", "Fragment",
            "Image",
            "InputError", "InputNotFoundError", "InputTooLargeError", "JSONSyntaxError", "LLMError",
            "Message", "MissingDependencyError", "NestingTooDeepError", "NotFoundError", "Part",
            "PrecisError", "PrecisWarning", "Provenance", "QueryError", "Round", "Segmentation",
            "SelectionError", "StoreError", "Text",
            "Thinking", "TokenCounter", "TokenizerError", "ToolCall", "ToolResult",
            "TriggerCues", "UnknownFormatError", "__version__", "get_counter", "load", "load_all",
            "precis_home", "segment", "should_compact",
        ]
    )
    for name in precis.__all__:
        assert hasattr(precis, name), name


def test_every_error_is_a_precis_error() -> None:
    for name in precis.errors.__all__:
        cls = getattr(precis.errors, name)
        if name == "PrecisWarning":  # the one warning: a fallback taken, the work went on
            assert issubclass(cls, UserWarning) and not issubclass(cls, precis.PrecisError)
            continue
        assert issubclass(cls, precis.PrecisError), name


def test_user_errors_are_input_errors() -> None:
    for cls in (precis.JSONSyntaxError, precis.EncodingError, precis.FormatError,
                precis.SelectionError, precis.UnknownFormatError, precis.EmptyInputError,
                precis.InputTooLargeError, precis.NestingTooDeepError, precis.QueryError,
                precis.NotFoundError):
        assert issubclass(cls, precis.InputError)


def test_precis_home_follows_env(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PRECIS_HOME", str(tmp_path / "state"))
    assert precis.precis_home() == tmp_path / "state"
    assert not (tmp_path / "state").exists()
    assert precis.precis_home(create=True).is_dir()


def test_py_typed_marker_ships() -> None:
    from pathlib import Path

    assert (Path(precis.__file__).parent / "py.typed").exists()
