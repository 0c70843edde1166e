"""What the rule and dashboard builders are configured with, as one typed value
(`MonitoringConfig`, kubernetes-mixin's `_config`): the thresholds of alerts/thresholds.yml
and where the runbooks are served (WLMON_RUNBOOK_BASE_URL), with an alert's link into them.
Read at the edge (load_monitoring_config, by `python -m alerts.build`,
`python -m dashboards.build`, a test) and handed down; nothing below the edge reads either."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from alerts.thresholds import THRESHOLDS_FILE, load_thresholds
from exporters.thresholds import Thresholds
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


class MonitoringConfig(BaseModel):
    """Everything the builders read, typed: a rule or panel takes its number from
    `config.thresholds.<key>` (a name the type checks), never from a dict by a string."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thresholds: Thresholds
    runbook_base_url: str = DEFAULT_RUNBOOK_BASE_URL

    def runbook_url(self, alert: str) -> str:
        return runbook_url(self.runbook_base_url, alert)


def runbook_url(base: str, alert: str) -> str:
    """The link to an alert's section of the runbooks the API serves at `base`."""
    return f"{base}#{section_id(alert)}"


def load_monitoring_config(path: Path = THRESHOLDS_FILE) -> MonitoringConfig:
    """The builders' configuration, read here at their edge: thresholds.yml and
    WLMON_RUNBOOK_BASE_URL. Raises alerts.thresholds.ThresholdsError, or pydantic's
    ValidationError naming WLMON_RUNBOOK_BASE_URL."""
    return MonitoringConfig(
        thresholds=load_thresholds(path),
        runbook_base_url=RunbookSettings().runbook_base_url,
    )
