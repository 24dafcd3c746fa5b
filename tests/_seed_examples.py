"""Pull the example programs out of the seed documents hookgrad was specified from.

The seeds are web pages saved as text, so their examples arrive mangled in two ways:

- doctest examples (``>>>`` / ``...`` prompts) are flattened onto one line, their indentation
  lost and the printed output glued to the statement that printed it;
- a blog post's code blocks are plain lines between paragraphs of prose.

``programs(text)`` undoes both: it splits on the prompts, separates output from code by finding
the longest prefix of each piece that parses, re-indents from the shape of the code (a line ending
in ``:`` opens a block, ``return`` closes one, a blank line ends a class or function unless a
decorator or ``def`` follows) and keeps, from plain text, the runs of lines that parse as Python.
The code comes back as written, except that its imports name hookgrad.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_PROMPT = re.compile(r"(?:^|\s)(>>>|\.\.\.)(?=\s|$)")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_CLOSES_BLOCK = re.compile(r"^(return|raise|pass|continue|break)\b")
_OPENS_MEMBER = re.compile(r"^(@|def\s|async\s+def\s)")
_IMPORTS = [  # (pattern, replacement): only the import lines change
    (re.compile(r"^(\s*)import torch$", re.M), r"\1import hookgrad as torch"),
    (re.compile(r"^(\s*)import torch\.(\S+) as (\w+)$", re.M), r"\1import hookgrad.\2 as \3"),
    (re.compile(r"^(\s*)from torch(\.\S+)? import ", re.M), r"\1from hookgrad\2 import "),
    (re.compile(r"^(\s*)import paddle$", re.M), r"\1import hookgrad.compat.paddle as paddle"),
    (re.compile(r"^(\s*)from paddle(\.\S+)? import ", re.M),
     r"\1from hookgrad.compat.paddle\2 import "),
]


@dataclass
class Program:
    """One seed's example code (hookgrad imports) and the output the page says it prints."""

    code: str
    stated_output: list[str] = field(default_factory=list)
    library: str = "torch"  # whose API the page documents: "torch" or "paddle"


def _parses(line: str) -> bool:
    if line.startswith("#"):
        return True
    if line.startswith("@"):
        candidate = f"{line}\ndef _decorated():\n    pass\n"
    elif line.endswith(":"):
        candidate = f"{line}\n    pass\n"
    else:
        candidate = f"def _body():\n    {line}\n"  # so that `return` parses
    try:
        compile(candidate, "<seed>", "exec")
    except SyntaxError:
        return False
    return True


def _split_output(piece: str) -> tuple[str, str]:
    """(code, output glued after it): the longest prefix, cut at a space, that parses."""
    if _parses(piece):
        return piece, ""
    cuts = [m.start() for m in re.finditer(r" ", piece)]
    for cut in reversed(cuts):
        if _parses(piece[:cut].rstrip()):
            return piece[:cut].rstrip(), piece[cut:].strip()
    return "", piece


def _doctest_program(text: str) -> Program | None:
    blob = " ".join(line.strip() for line in text.splitlines() if line.strip().startswith(">>>"))
    if not blob:
        return None
    marks = list(_PROMPT.finditer(blob))
    pieces = [(mark.group(1), blob[mark.end():(marks[i + 1].start() if i + 1 < len(marks)
                                                else len(blob))].strip())
              for i, mark in enumerate(marks)]
    continuation_prompts = any(prompt == "..." for prompt, _ in pieces)
    lines: list[str] = []
    output: list[str] = []
    indent, after_blank = 0, False
    for prompt, piece in pieces:
        code, printed = _split_output(piece)
        if printed:
            output.append(printed)
        if not code:
            after_blank = True
            continue
        if continuation_prompts and prompt == ">>>":
            indent = 0
        elif after_blank and not _OPENS_MEMBER.match(code) and not continuation_prompts:
            indent = 0
        after_blank = False
        lines.append(" " * indent + code)
        if code.endswith(":") and not code.startswith("#"):
            indent += 4
        elif _CLOSES_BLOCK.match(code):
            indent = max(indent - 4, 0)
    return Program("\n".join(lines) + "\n", output)


def _is_program(block: list[str]) -> bool:
    source = "\n".join(block)
    try:
        compile(source, "<seed>", "exec")
    except SyntaxError:
        return False
    return bool(re.search(r"\bdef\s|\bimport\s|[^=!<>]=[^=]|\w\(", source))


def _plain_text_program(text: str) -> Program | None:
    """Runs of non-blank lines without CJK characters that parse as Python, in page order."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines() + [""]:
        if line.strip() and not _CJK.search(line):
            current.append(line.rstrip())
            continue
        if current:
            blocks.append(current)
        current = []
    code: list[str] = []
    output: list[str] = []
    for block in blocks:
        stated = [line[4:] for line in block if line.startswith(">>> ")]
        body = [line for line in block if not line.startswith(">>> ")]
        if body and _is_program(body):
            code.extend(body + [""])
            output.extend(stated)
    if not code:
        return None
    return Program("\n".join(code), output)


def program(text: str) -> Program | None:
    """The seed's example code, imports naming hookgrad; None when the page has none."""
    found = _doctest_program(text)
    if found is None or len(found.code.splitlines()) < 2:  # a lone ">>> output" line is no example
        found = _plain_text_program(text)
    if found is None:
        return None
    source = found.code
    for pattern, replacement in _IMPORTS:
        source = pattern.sub(replacement, source)
    library = "paddle" if "paddle" in source else "torch"
    return Program(source, found.stated_output, library)
