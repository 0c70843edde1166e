"""Secrets as files (docker-compose secrets, /run/secrets), read by pydantic-settings.

docker-compose gave the API and the exporter their tokens and passwords as environment
variables, which `docker inspect` shows to anyone who may run it (issue 38 item 3). With
WLMON_SECRETS_DIR set (compose sets /run/secrets), a settings class also reads each field
from the file named as its variable (wlmon_api_token for WLMON_API_TOKEN, any case); a
variable of the environment still wins. Unset: the environment alone, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SecretsSettingsSource

SECRETS_DIR_VARIABLE = "WLMON_SECRETS_DIR"
# One secret, one name: the exporter's control token was three variables (the exporter's,
# the API's and the stack's). The old names are still read for one release, with a warning.
EXPORTER_TOKEN_VARIABLE = "WLMON_EXPORTER_TOKEN"
DEPRECATED_NAMES = {
    "WLMON_EXPORTER_CONTROL_TOKEN": EXPORTER_TOKEN_VARIABLE,
    "WLMON_API_EXPORTER_TOKEN": EXPORTER_TOKEN_VARIABLE,
}


def deprecated_names_in_use(environ: Mapping[str, str]) -> list[str]:
    """One warning line per old name set in `environ` or as a file of WLMON_SECRETS_DIR."""
    directory = environ.get(SECRETS_DIR_VARIABLE)
    files = (
        {p.lower() for p in os.listdir(directory)}
        if directory and os.path.isdir(directory)
        else set()
    )
    return [
        f"{old} is deprecated and read for one more release: set {new} instead"
        for old, new in DEPRECATED_NAMES.items()
        if old in environ or old.lower() in files
    ]


def with_secret_files(
    settings_cls: type[BaseSettings], *sources: PydanticBaseSettingsSource
) -> tuple[PydanticBaseSettingsSource, ...]:
    """`sources` (init, env, dotenv, file secrets), plus WLMON_SECRETS_DIR's files after the
    environment when that variable names a directory."""
    directory = os.environ.get(SECRETS_DIR_VARIABLE)
    if not directory:
        return sources
    if not os.path.isdir(directory):
        raise ValueError(f"{SECRETS_DIR_VARIABLE}={directory}: not a directory")
    return (*sources, SecretsSettingsSource(settings_cls, secrets_dir=directory))


class SecretFilesSettings(BaseSettings):
    """A settings class that also reads WLMON_SECRETS_DIR's files, after the environment:
    the base of every settings class docker-compose gives secrets as files."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return with_secret_files(
            settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings
        )
