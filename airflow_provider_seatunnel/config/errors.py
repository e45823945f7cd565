"""The one error type for bad job configs, and the located problems it carries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The code of a warning that makes ``validate`` (and ``run``) fail: the job names a plugin, or asks a
#: plugin for something (a file format, a codec, a dialect), that plans but that this package cannot
#: run. A feature gap, not a mistake in the config.
NOT_RUNNABLE = "not-runnable"

# C0 controls but newline and tab, DEL, C1 controls, and the Unicode marks that reorder or hide text
# (bidi embeddings, overrides and isolates, zero-width marks, line and paragraph separators)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """``text`` safe to print on a terminal: every control character but newline and tab (ESC,
    carriage return, backspace, bell, C1 controls) and every character that reorders or hides text
    (bidi overrides, zero-width marks) written as its ``\\uXXXX`` escape, which is also how JSON
    spells it, so JSON output stays valid and decodes to the same text."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or doubtful) in a job config, with where it is.

    ``plugin`` reads like ``source[1] FakeSource``; ``key`` is the option name.
    """

    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    plugin: str | None = None
    key: str | None = None
    hint: str | None = None
    severity: str = "error"
    code: str | None = None  # "not-runnable": plans, but fails validate

    def where(self) -> str:
        parts = [self.file or "<config>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def format(self) -> str:
        text = f"{self.where()}: "
        if self.severity != "error":
            text += f"{self.severity}: "
        if self.plugin:
            text += f"{self.plugin}: "
        if self.key:
            text += f"option '{self.key}': "
        text += self.message
        if self.hint:
            text += f" ({self.hint})"
        return escape_controls(text)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class ConfigError(ValueError):
    """A job config that cannot be compiled. Carries every problem found.

    The message names the file, line (and column), plugin and key of each problem
    and says what to do. Retrying cannot fix it.
    """

    def __init__(self, problems: Problem | Iterable[Problem], warnings: Iterable[Problem] = ()):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        #: what was doubtful before the error stopped the compiler (shown with the errors)
        self.warnings: list[Problem] = list(warnings)
        super().__init__("\n".join(p.format() for p in self.problems))

    def with_warnings(self, warnings: Iterable[Problem]) -> ConfigError:
        """This error, with ``warnings`` (found before it) ahead of its own."""
        seen = set(self.warnings)
        self.warnings = [*(w for w in warnings if w not in seen), *self.warnings]
        return self

    @classmethod
    def at(cls, message: str, **where) -> ConfigError:
        return cls(Problem(message, **where))

    @property
    def first(self) -> Problem:
        return self.problems[0]
