"""Griffe extension: the reStructuredText habits of the docstrings, as Markdown.

The project's docstrings are Google style with a few reStructuredText habits, which
Markdown would render literally. Before rendering, this extension rewrites

* Sphinx roles (``:class:`~agents.base.Agent```, ``:func:`make```) into *optional*
  autorefs references (``<autoref identifier="..." optional>``): a link when the target
  is documented somewhere on the site, plain code otherwise (never a broken link, never a
  strict-mode warning). Targets are resolved the way Sphinx does for the Python domain:
  a dotted path as written, else a name looked up from the object outwards;
* an ``Example:`` section into ``Examples:`` (the Google name whose ``>>>`` lines render
  as code);
* a paragraph ending in ``::`` before an indented literal block into one ending in ``:``;
* simple tables (``====  ====`` rules) into Markdown tables;
* a list that starts right under a paragraph line gets the blank line Markdown needs.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|exc|obj|const|type):"
    r"`(?P<tilde>~)?(?P<target>[^`<>]+?)(?:\(\))?`"
)


def _lookup(scope: griffe.Object, name: str) -> griffe.Object | griffe.Alias | None:
    """``name`` (possibly dotted) as a member path under ``scope``, else ``None``."""
    obj: Any = scope
    for part in name.split("."):
        try:
            obj = obj.members[part]
        except (KeyError, AttributeError, griffe.AliasResolutionError):
            return None
    return obj


def _identifier(obj: griffe.Object, target: str, collection: Any) -> str:
    """The documented path of ``target`` as seen from ``obj``, or ``target`` itself."""
    target = target.lstrip(".")
    found = None
    if "." in target:
        try:
            found = collection.get_member(target)
        except Exception:  # noqa: BLE001 - anything griffe cannot resolve stays as written
            found = None
    scope: Any = obj
    while found is None and scope is not None:
        found = _lookup(scope, target)
        scope = scope.parent
    if found is None:
        return target
    try:
        return found.canonical_path if isinstance(found, griffe.Alias) else found.path
    except griffe.AliasResolutionError:
        return found.path


_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_LITERAL = re.compile(r"(\S)::\n(?=\n)")
_RULE = re.compile(r"^=+(?: +=+)+$")
_LIST = re.compile(r"^(?P<ind>[ \t]*)(?P<prev>[^\s*-].*)\n(?P=ind)(?P<item>[-*] )", re.MULTILINE)


def _tables(text: str) -> str:
    """Simple reStructuredText tables (rule, header, rule, rows, rule) as Markdown tables."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if (
            _RULE.match(lines[i].strip())
            and i + 2 < len(lines)
            and _RULE.match(lines[i + 2].strip())
        ):
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            ncol = len(lines[i].split())
            end = i + 3
            while end < len(lines) and not _RULE.match(lines[end].strip()):
                end += 1
            rows = [lines[i + 1]] + lines[i + 3 : end]
            cells = [re.split(r"\s{2,}", row.strip(), maxsplit=ncol - 1) for row in rows]
            if end < len(lines) and all(len(c) == ncol for c in cells):
                out.append(indent + "| " + " | ".join(cells[0]) + " |")
                out.append(indent + "|" + " --- |" * ncol)
                out += [indent + "| " + " | ".join(c) + " |" for c in cells[1:]]
                i = end + 1
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _rewrite(obj: griffe.Object, collection: Any) -> None:
    if obj.docstring is None:
        return
    value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
    value = _LITERAL.sub(r"\1:\n", value)
    value = _LIST.sub(r"\g<ind>\g<prev>\n\n\g<ind>\g<item>", value)
    obj.docstring.value = _tables(value) if "==" in value else value
    if ":" not in obj.docstring.value:
        return

    def repl(m: re.Match[str]) -> str:
        target = m["target"].strip()
        shown = target.rsplit(".", 1)[-1] if m["tilde"] else target
        if m["role"] in ("func", "meth"):
            shown += "()"
        ident = html.escape(_identifier(obj, target, collection), quote=True)
        return f'<autoref identifier="{ident}" optional><code>{html.escape(shown)}</code></autoref>'

    obj.docstring.value = _ROLE.sub(repl, obj.docstring.value)


class RstToMarkdown(griffe.Extension):
    """Rewrite the docstrings of a package as Markdown, once the package is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        seen: set[int] = set()
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            _rewrite(obj, loader.modules_collection)
            for member in obj.members.values():
                if not member.is_alias:
                    stack.append(member)
