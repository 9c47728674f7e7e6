"""HTML → plain text or Markdown with the standard library's html.parser (no new dependency).

Good enough for documentation pages: headings, paragraphs, links, emphasis, code, lists,
quotes, images; scripts, styles and the document head are dropped."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "iframe", "object", "embed", "head", "template", "svg"}
_BLOCK = {
    "p", "div", "section", "article", "header", "footer", "nav", "aside", "main", "table", "tr",
    "form", "figure", "figcaption", "dl", "dt", "dd", "ul", "ol", "blockquote", "pre",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "body", "html",
}  # fmt: skip
_INLINE_MD = {"strong": "**", "b": "**", "em": "*", "i": "*", "code": "`"}  # same mark opens and closes
_VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "source", "wbr"}


class _Converter(HTMLParser):
    def __init__(self, markdown: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.out: list[str] = []
        self.skip = 0  # depth inside elements whose content is dropped
        self.pre = 0
        self.lists: list[list[int | str]] = []  # per open list: [kind, counter]
        self.links: list[str | None] = []
        self.quotes: list[int] = []  # output index where each open blockquote began

    # -- output helpers --
    def _block_break(self) -> None:
        self.out.append("\n\n")

    def _emit(self, text: str) -> None:
        if not self.skip:
            self.out.append(text)

    def _inline(self, tag: str) -> bool:
        """Emit the Markdown mark of an inline tag (bold, italic, code); False if it has none."""
        mark = _INLINE_MD.get(tag) if self.markdown and not self.pre else None
        if mark:
            self._emit(mark)
        return mark is not None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        if tag in _BLOCK:
            self._block_break()
        start = _STARTS.get(tag)
        if start is not None:
            start(self, tag, dict(attrs))
        else:
            self._inline(tag)

    # -- start tags with more to do than a block break or an inline mark (``_STARTS``) --
    def _start_br(self, tag: str, a: dict[str, str | None]) -> None:
        self._emit("\n")

    def _start_hr(self, tag: str, a: dict[str, str | None]) -> None:
        self._emit("---\n\n" if self.markdown else "")

    def _start_heading(self, tag: str, a: dict[str, str | None]) -> None:
        if self.markdown:
            self._emit("#" * int(tag[1]) + " ")

    def _start_list(self, tag: str, a: dict[str, str | None]) -> None:
        self.lists.append([tag, 0])

    def _start_li(self, tag: str, a: dict[str, str | None]) -> None:
        depth = max(len(self.lists) - 1, 0)
        marker = "- "
        if self.lists and self.lists[-1][0] == "ol":
            self.lists[-1][1] = int(self.lists[-1][1]) + 1
            marker = f"{self.lists[-1][1]}. "
        self.out.append("\n")
        self._emit("  " * depth + (marker if self.markdown else ("• " if marker == "- " else marker)))

    def _start_blockquote(self, tag: str, a: dict[str, str | None]) -> None:
        self.quotes.append(len(self.out))

    def _start_pre(self, tag: str, a: dict[str, str | None]) -> None:
        self.pre += 1
        if self.markdown:
            self._emit("```\n")

    def _start_a(self, tag: str, a: dict[str, str | None]) -> None:
        href = a.get("href")
        self.links.append(href)
        if self.markdown and href:
            self._emit("[")

    def _start_img(self, tag: str, a: dict[str, str | None]) -> None:
        alt = a.get("alt") or ""
        if self.markdown and a.get("src"):
            self._emit(f"![{alt}]({a['src']})")
        elif alt:
            self._emit(alt)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip = max(self.skip - 1, 0)
            return
        if self.skip:
            return
        md = self.markdown
        if tag == "pre":
            self.pre = max(self.pre - 1, 0)
            if md:
                self._emit("\n```")
        elif self._inline(tag):
            pass
        elif tag == "a":
            href = self.links.pop() if self.links else None
            if md and href:
                self._emit(f"]({href})")
        elif tag in {"ul", "ol"} and self.lists:
            self.lists.pop()
        elif tag == "blockquote" and self.quotes:
            start = self.quotes.pop()
            inner = re.sub(r"\n{3,}", "\n\n", "".join(self.out[start:])).strip()
            if md:
                inner = "\n".join("> " + ln if ln else ">" for ln in inner.split("\n"))
            self.out[start:] = [inner]
        if tag in _BLOCK:
            self._block_break()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self.out.append(data)
            return
        text = re.sub(r"\s+", " ", data)
        before = "".join(self.out[-1:])
        if not before or before.endswith(("\n", " ")):
            text = text.lstrip()  # collapsed whitespace never starts a line or doubles a space
        self.out.append(text)

    def result(self) -> str:
        text = "".join(self.out)
        # Tidy: no trailing spaces, at most one blank line in a row.
        text = re.sub(r"[ \t]+\n", "\n", text)
        text = re.sub(r"\n{3,}", "\n\n", text)
        return text.strip()


# Tag → what its start does beyond a block break; other tags get their inline mark, if any.
_STARTS: dict[str, Callable[[_Converter, str, dict[str, str | None]], None]] = {
    "br": _Converter._start_br,
    "hr": _Converter._start_hr,
    **dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), _Converter._start_heading),
    "ul": _Converter._start_list,
    "ol": _Converter._start_list,
    "li": _Converter._start_li,
    "blockquote": _Converter._start_blockquote,
    "pre": _Converter._start_pre,
    "a": _Converter._start_a,
    "img": _Converter._start_img,
}


def html_to_text(html: str) -> str:
    conv = _Converter(markdown=False)
    conv.feed(html)
    conv.close()
    return conv.result()


def html_to_markdown(html: str) -> str:
    conv = _Converter(markdown=True)
    conv.feed(html)
    conv.close()
    return conv.result()
