"""GET /runbooks: the alerts' runbooks as a web page, where the rules' runbook_url links lead."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from api.deps import RunbooksDep, SettingsDep
from api.services import runbooks as service

router = APIRouter(prefix="/runbooks", tags=["runbooks"])


@router.get(
    "",
    response_class=HTMLResponse,
    summary="The alert runbooks, one section per alert (id: the alert name in lower case)",
    responses={200: {"content": {"text/html": {}}, "description": "the runbooks as HTML"}},
)
def runbooks(read: RunbooksDep, settings: SettingsDep) -> HTMLResponse:
    return HTMLResponse(service.render(read(), settings.dashboards_url))
