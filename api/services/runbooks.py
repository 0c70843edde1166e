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
from markupsafe import Markup, escape

from alerts.dashboards import DASHBOARDS, dashboard_path
from exporters.vocabulary import section_id


def _heading_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # The id the rules' runbook_url names: the alert name in lower case.
    tokens[idx].attrSet("id", section_id(tokens[idx + 1].content))
    return self.renderToken(tokens, idx, options, env)


def _heading_close(base: str):
    """After an alert's heading, the link to the dashboard that shows its evidence (the
    table alerts/dashboards.py keeps for the notifications too)."""

    def rule(
        self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        html = self.renderToken(tokens, idx, options, env)
        name = tokens[idx - 1].content
        dashboard = DASHBOARDS.get(name) if tokens[idx].tag == "h2" else None
        if dashboard is None:
            return html
        href = f"{base.rstrip('/')}{dashboard_path(dashboard)}"
        return html + (
            f'<p class="dashboard"><strong>Dashboard:</strong> '
            f'<a href="{escape(href)}">{escape(dashboard)}</a> (choose the SID and instance '
            "of the notification; its own link opens them at the alert's time)</p>\n"
        )

    return rule


@lru_cache
def _page() -> Template:
    return Environment(loader=PackageLoader("api", "templates"), autoescape=True).get_template(
        "runbooks.html"
    )


def render(markdown: str, dashboards_base: str) -> str:
    """The page, each alert linked to its dashboard at `dashboards_base` (Perses). markdown-it
    escapes the text and, with html off, any HTML in the Markdown, so its output is safe to
    insert unescaped."""
    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("heading_open", _heading_open)
    md.add_render_rule("heading_close", _heading_close(dashboards_base))
    return _page().render(body=Markup(md.render(markdown)))
