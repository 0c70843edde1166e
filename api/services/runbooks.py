"""The runbooks as a web page (served at GET /runbooks), where the rules' runbook_url links
lead: one section per alert, its id the alert name in lower case. The Markdown comes from
the alerts package (alerts.runbooks), handed in by the app factory: nothing here reads it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from jinja2 import Environment, PackageLoader, Template
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

from exporters.vocabulary import section_id


def _heading_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # The id the rules' runbook_url names: the alert name in lower case.
    tokens[idx].attrSet("id", section_id(tokens[idx + 1].content))
    return self.renderToken(tokens, idx, options, env)


@lru_cache
def _page() -> Template:
    return Environment(loader=PackageLoader("api", "templates"), autoescape=True).get_template(
        "runbooks.html"
    )


def render(markdown: str) -> str:
    """The page. markdown-it escapes the text and, with html off, any HTML in the Markdown,
    so its output is safe to insert unescaped."""
    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("heading_open", _heading_open)
    return _page().render(body=Markup(md.render(markdown)))
