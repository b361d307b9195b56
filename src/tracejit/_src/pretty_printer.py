"""A small Wadler/Lindig-style pretty printer: documents that lay themselves out to a width.

A document is text joined with *breaks*. Inside a *group*, the breaks are either all flat (a
space, or the text they were given) or all line breaks, chosen by whether the group fits on the
rest of the line; only the group itself is measured, not the text that follows it (as JAX's
printer does). A group that holds a single break gives "fill" behaviour (break once the line is
full); `nest` sets the indentation that line breaks return to. The jaxpr
printer builds its documents from these five constructors, so one layout algorithm decides where
every jaxpr line breaks.
"""

from __future__ import annotations

DEFAULT_WIDTH = 80


class Doc:
    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return Concat((self, other))

    def format(self, width: int = DEFAULT_WIDTH) -> str:
        return _format(self, width)


class Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: tuple):
        self.children = children


class Nest(Doc):
    __slots__ = ("child", "indent")

    def __init__(self, indent: int, child: Doc):
        self.indent = indent
        self.child = child


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child


class Break(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str = " "):
        self.text = text


def text(s: str) -> Doc:
    return Text(s)


def concat(docs) -> Doc:
    return Concat(tuple(docs))


def nest(indent: int, doc: Doc) -> Doc:
    return Nest(indent, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def brk(flat_text: str = " ") -> Doc:
    return Break(flat_text)


def join(separator: Doc, docs) -> Doc:
    docs = list(docs)
    parts = []
    for i, doc in enumerate(docs):
        if i:
            parts.append(separator)
        parts.append(doc)
    return Concat(tuple(parts))


_FLAT, _BREAK = 0, 1


def _fits(width: int, agenda: list) -> bool:
    """Whether the agenda, read up to its first line break, fits in `width` columns."""
    while width >= 0:
        if not agenda:
            return True
        indent, mode, doc = agenda.pop()
        if isinstance(doc, Text):
            width -= len(doc.text)
        elif isinstance(doc, Concat):
            agenda.extend((indent, mode, child) for child in reversed(doc.children))
        elif isinstance(doc, Nest):
            agenda.append((indent + doc.indent, mode, doc.child))
        elif isinstance(doc, Group):
            agenda.append((indent, mode, doc.child))
        elif isinstance(doc, Break):
            if mode == _BREAK:
                return True
            width -= len(doc.text)
    return False


def _format(doc: Doc, width: int) -> str:
    out = []
    column = 0
    agenda = [(0, _BREAK, doc)]
    while agenda:
        indent, mode, doc = agenda.pop()
        if isinstance(doc, Text):
            out.append(doc.text)
            column += len(doc.text)
        elif isinstance(doc, Concat):
            agenda.extend((indent, mode, child) for child in reversed(doc.children))
        elif isinstance(doc, Nest):
            agenda.append((indent + doc.indent, mode, doc.child))
        elif isinstance(doc, Group):
            flat = (indent, _FLAT, doc.child)
            fits = mode == _FLAT or _fits(width - column, [flat])
            agenda.append(flat if fits else (indent, _BREAK, doc.child))
        elif isinstance(doc, Break):
            if mode == _FLAT:
                out.append(doc.text)
                column += len(doc.text)
            else:
                out.append("\n" + " " * indent)
                column = indent
    return "".join(out)
