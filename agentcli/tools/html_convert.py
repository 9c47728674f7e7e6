"""HTML → plain text or Markdown with the standard library's html.parser (no new dependency).

Good enough for documentation pages: headings, paragraphs, links, emphasis, code, lists,
quotes, images; scripts, styles and the document head are dropped."""

from __future__ import annotations

import re
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
        a = dict(attrs)
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        md = self.markdown
        if tag in _BLOCK:
            self._block_break()
        if tag == "br":
            self._emit("\n")
        elif tag == "hr":
            self._emit("---\n\n" if md else "")
        elif md and tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self._emit("#" * int(tag[1]) + " ")
        elif tag in {"ul", "ol"}:
            self.lists.append([tag, 0])
        elif tag == "li":
            depth = max(len(self.lists) - 1, 0)
            marker = "- "
            if self.lists and self.lists[-1][0] == "ol":
                self.lists[-1][1] = int(self.lists[-1][1]) + 1
                marker = f"{self.lists[-1][1]}. "
            self.out.append("\n")
            self._emit("  " * depth + (marker if md else ("• " if marker == "- " else marker)))
        elif tag == "blockquote":
            self.quotes.append(len(self.out))
        elif tag == "pre":
            self.pre += 1
            if md:
                self._emit("```\n")
        elif self._inline(tag):
            pass
        elif tag == "a":
            href = a.get("href")
            self.links.append(href)
            if md and href:
                self._emit("[")
        elif tag == "img":
            alt = a.get("alt") or ""
            if md and a.get("src"):
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
