"""Why a service refuses: each error carries the HTTP status the API answers with; the
command line prints the message."""

from __future__ import annotations

from fastapi import status


class ServiceError(Exception):
    """A request that cannot be served; the message says what was wrong."""

    status_code: int = status.HTTP_400_BAD_REQUEST


class NotFound(ServiceError):
    status_code = status.HTTP_404_NOT_FOUND


class Conflict(ServiceError):
    """The request is right but the state forbids it now (a run still running, ...)."""

    status_code = status.HTTP_409_CONFLICT


class Invalid(ServiceError):
    """The input is wrong: a plan, a window or an imported file."""

    status_code = status.HTTP_422_UNPROCESSABLE_CONTENT


class Unreachable(ServiceError):
    """A server the request needs (the exporter, Prometheus) cannot be used."""

    status_code = status.HTTP_502_BAD_GATEWAY
