"""Where the runbooks are served (WLMON_RUNBOOK_BASE_URL), and an alert's link into them."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from exporters.vocabulary import section_id

# The API's GET /runbooks on the machine that runs the stack: what the committed rule files
# carry. The native stack rewrites it to its own API port when it copies the rules.
DEFAULT_RUNBOOK_BASE_URL = "http://127.0.0.1:8000/runbooks"


class RunbookSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_")

    # An absolute URL, because people click it in an e-mail, far from the repository.
    runbook_base_url: str = DEFAULT_RUNBOOK_BASE_URL

    @field_validator("runbook_base_url")
    @classmethod
    def _absolute(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(
                f"WLMON_RUNBOOK_BASE_URL: {value!r} is not an absolute http(s) URL without #"
            )
        return value.rstrip("/")


def runbook_url(base: str, alert: str) -> str:
    """The link to an alert's section of the runbooks the API serves at `base`."""
    return f"{base}#{section_id(alert)}"
