"""The tokens of SeaTunnel's HOCON dialect, with the line and column of each.

Whitespace is not a token: it is kept in the ``space_before`` of the next token, since
HOCON keeps the spaces between the pieces of a concatenated value. Comments (``#`` and
``//``, to the end of the line) are dropped; a newline is a token, since it separates
entries. A quoted string may not span lines; a triple-quoted one may, and takes no
escapes. An unquoted ``${path}`` (``${?path}`` when optional) is one token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class Pos:
    line: int
    col: int
    file: str | None = field(default=None, compare=False)  # set for what an included file holds


@dataclass
class Token:
    kind: str  # LBRACE RBRACE LBRACK RBRACK COMMA COLON EQUALS PLUSEQ NEWLINE STRING UNQUOTED SUBST EOF
    value: Any
    pos: Pos
    space_before: str = ""


_PUNCT = {"{": "LBRACE", "}": "RBRACE", "[": "LBRACK", "]": "RBRACK", ",": "COMMA", ":": "COLON", "=": "EQUALS"}
_SPACE = " \t\r\ufeff\u00a0"
_SPACE_RUN = re.compile("[ \t\r\ufeff\u00a0]+")
# An unquoted run ends at these characters (HOCON forbids more; these are the ones that matter), and
# where a comment ('//') or an append ('+=') starts.
_UNQUOTED_RUN = re.compile(r'(?:[^{}\[\],:="$#\n\t\r \\/+]|/(?!/)|\+(?!=))+')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_UNICODE_ESCAPE = re.compile(r"[0-9a-fA-F]{4}")


def tokenize(text: str, file: str | None = None) -> list[Token]:
    """The tokens of ``text``, ending with ``EOF``; raise :class:`ConfigError` at a lexical error."""
    return _Lexer(text, file).run()


@dataclass
class _Lexer:
    text: str
    file: str | None
    tokens: list[Token] = field(default_factory=list)

    def error(self, message: str, line: int, col: int, hint: str | None = None) -> ConfigError:
        return ConfigError.at(message, file=self.file, line=line, col=col, hint=hint)

    def run(self) -> list[Token]:
        text, n = self.text, len(self.text)
        i, line, line_start = 0, 1, 0
        space = ""
        append = self.tokens.append
        while i < n:
            c = text[i]
            if c in _SPACE:
                j = _SPACE_RUN.match(text, i).end()  # type: ignore[union-attr]  # c matches
                space += text[i:j]
                i = j
                continue
            col = i - line_start + 1
            if c == "\n":
                append(Token("NEWLINE", None, Pos(line, col, self.file), space))
                i += 1
                line += 1
                line_start = i
            elif c == "#" or text.startswith("//", i):
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue  # the spaces before a comment stay with the next token
            elif c in _PUNCT:
                append(Token(_PUNCT[c], c, Pos(line, col, self.file), space))
                i += 1
            elif c == "+" and text.startswith("+=", i):
                append(Token("PLUSEQ", "+=", Pos(line, col, self.file), space))
                i += 2
            elif c == '"':
                pos = Pos(line, col, self.file)
                if text.startswith('"""', i):
                    value, i = self._triple_quoted(i, line, col)
                    if "\n" in value:  # the token stands where it opens; what follows, after its last line
                        line += value.count("\n")
                        line_start = i - 3 - len(value) + value.rindex("\n") + 1
                else:
                    value, i = self._quoted(i, line, col)
                append(Token("STRING", value, pos, space))
            elif c == "$":
                inner, i = self._substitution(i, line, col)
                append(Token("SUBST", inner, Pos(line, col, self.file), space))
            elif c == "\\":
                raise self.error("a backslash is only allowed inside a quoted string", line, col,
                                 'quote the value: "..."')
            else:
                j = _UNQUOTED_RUN.match(text, i).end()  # type: ignore[union-attr]  # c starts a run
                append(Token("UNQUOTED", text[i:j], Pos(line, col, self.file), space))
                i = j
            space = ""
        append(Token("EOF", None, Pos(line, n - line_start + 1, self.file), space))
        return self.tokens

    def _triple_quoted(self, i: int, line: int, col: int) -> tuple[str, int]:
        """The text of the ``\"\"\"...\"\"\"`` string opening at ``i``, and the index after it."""
        text, n = self.text, len(self.text)
        end = text.find('"""', i + 3)
        if end < 0:
            raise self.error("unterminated triple-quoted string", line, col, 'close it with """')
        while end + 3 < n and text[end + 3] == '"':  # extra quotes belong to the string
            end += 1
        return text[i + 3 : end], end + 3

    def _substitution(self, i: int, line: int, col: int) -> tuple[tuple[str, bool], int]:
        """``(path, optional)`` of the ``${...}`` opening at ``i``, and the index after it."""
        text = self.text
        if not text.startswith("${", i):
            raise self.error("a lone '$' is not valid here", line, col, "quote the value")
        end = text.find("}", i)
        nl = text.find("\n", i)
        if end < 0 or (0 <= nl < end):
            raise self.error("unterminated substitution '${'", line, col, "close it with '}'")
        inner = text[i + 2 : end].strip()
        optional = inner.startswith("?")
        if optional:
            inner = inner[1:].strip()
        if not inner:
            raise self.error("empty substitution '${}'", line, col)
        if inner.startswith('"') and inner.endswith('"') and len(inner) >= 2:
            inner = inner[1:-1]
        return (inner, optional), end + 1

    def _quoted(self, i: int, line: int, col: int) -> tuple[str, int]:
        """The value of the one-line ``"..."`` string opening at ``i`` (escapes applied), and the index after it."""
        text, n = self.text, len(self.text)
        out: list[str] = []
        j = i + 1
        while True:
            if j >= n or text[j] == "\n":
                raise self.error("unterminated quoted string", line, col, 'close it with "')
            c = text[j]
            if c == '"':
                return "".join(out), j + 1
            if c == "\\":
                if j + 1 >= n:
                    raise self.error("unterminated quoted string", line, col)
                e = text[j + 1]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    j += 2
                    continue
                if e == "u" and _UNICODE_ESCAPE.fullmatch(text[j + 2 : j + 6] or ""):
                    out.append(chr(int(text[j + 2 : j + 6], 16)))
                    j += 6
                    continue
                shown = f"'\\{e}'" if e.isprintable() else f"(a backslash before U+{ord(e):04X})"
                raise self.error(f"invalid escape {shown} in a quoted string", line, j - i + col,
                                 "write '\\\\' for a literal backslash")
            out.append(c)
            j += 1
