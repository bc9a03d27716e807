"""Every inline dialect, by name, in one table.

A row names the dialect, the reader that parses it (a factory from the
module named for the model family) and the option defaults that make that
reader the dialect: ``hermes`` and ``qwen3_coder`` share one reader and
differ in where calls may appear. To find a dialect, read its row; to add
one, add a row (and, for a new grammar, its module).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import deepseek, granite, harmony, kimi, llama, mistral, plain, tagged
from .base import ParserFactory, ParserKeywords, ParserOptions, ToolCallParser

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DIALECTS", "Dialect", "get_parser", "parser_names"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """One dialect: its name, its reader, other names for it, its defaults."""

    name: str
    reader: ParserFactory
    aliases: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)


_THINK = {"reasoning": "think"}
_THINK_EXTRACT = {"reasoning": "think", "calls_in_reasoning": "extract"}
_AT_START = {"require_call_at_start": True}

#: The dialects, in the order the docs list them.
DIALECTS: tuple[Dialect, ...] = (
    Dialect("passthrough", plain.plain, ("none",)),
    Dialect("think", plain.plain, (), _THINK),
    Dialect(
        "hermes", tagged.hermes, ("qwen", "qwen2.5", "qwen3", "granite4", "hermes2_pro"), _THINK
    ),
    Dialect("qwen3_coder", tagged.hermes, ("qwen3_xml", "qwen3.5"), _THINK_EXTRACT),
    Dialect("glm45", tagged.glm, ("glm4_moe", "glm46"), _THINK_EXTRACT),
    Dialect("glm47", tagged.glm, (), _THINK_EXTRACT),
    Dialect("jamba", tagged.tool_calls_list),
    Dialect("minimax", tagged.tool_calls_list, ("minimax_m1",), _THINK),
    Dialect(
        "minimax_m2",
        tagged.minimax_m2,
        (),
        {**_THINK_EXTRACT, "interleaved_reasoning": True},
    ),
    Dialect("seed_oss", tagged.seed_oss, (), {"reasoning": "seed"}),
    Dialect("internlm", tagged.internlm, ("internlm2",)),
    Dialect("delimited", tagged.delimited),
    Dialect("mistral", mistral.mistral, ("magistral", "devstral"), {"reasoning": "bracket"}),
    Dialect("phi4_mini", mistral.phi4_mini, ("phi4_mini_json", "firefunction_v2")),
    Dialect("llama3_json", llama.llama3_json, ("llama3", "llama"), _AT_START),
    Dialect("pythonic", llama.pythonic, ("llama4_pythonic",), _AT_START),
    Dialect("deepseek_v3", deepseek.deepseek_v3, ("deepseek_r1",), _THINK),
    Dialect("deepseek_v31", deepseek.deepseek_v31, ("deepseek_v3.1",), _THINK),
    Dialect("deepseek_v32", deepseek.deepseek_v32, ("dsml",), _THINK),
    Dialect("kimi_k2", kimi.kimi_k2, ("kimi",), _THINK_EXTRACT),
    Dialect("harmony", harmony.harmony, ("gpt_oss", "openai_harmony")),
    Dialect("granite", granite.granite, ("granite3",), _THINK),
)


def _by_name(dialects: tuple[Dialect, ...]) -> dict[str, Dialect]:
    table: dict[str, Dialect] = {}
    for dialect in dialects:
        for key in (dialect.name, *dialect.aliases):
            if key in table:
                raise ValueError(f"parser name {key!r} listed twice")
            table[key] = dialect
    return table


_BY_NAME = _by_name(DIALECTS)


def parser_names() -> list[str]:
    """The dialect names (aliases not included), in table order."""
    return [dialect.name for dialect in DIALECTS]


def get_parser(name: str, **options: Unpack[ParserKeywords]) -> ToolCallParser:
    """A fresh parser for dialect ``name``; ``options`` override its defaults.

    Raises ``ValueError`` for an unknown name (listing the valid ones) and
    ``TypeError`` for an unknown option.
    """
    dialect = _BY_NAME.get(name)
    if dialect is None:
        valid = ", ".join(sorted(_BY_NAME))
        raise ValueError(f"unknown inline parser {name!r}; valid names: {valid}")
    return dialect.reader(ParserOptions().updated(dialect.defaults).updated(options))
