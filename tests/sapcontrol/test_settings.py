"""Settings of the sapcontrol source and the model's sapstartsrv: lists, secrets, files."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from exporters.config import load_config
from exporters.registry import Sources
from exporters.sapcontrol.client import Endpoint, scrub
from exporters.sapcontrol.settings import SAPControlSettings, SapStartSrvSettings
from exporters.sources.sapcontrol import SAPControlScraper


def test_endpoints_from_a_comma_list_and_secrets_from_a_file(monkeypatch, tmp_path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("from-a-file\n")
    monkeypatch.setenv(
        "WLMON_SAPCONTROL_ENDPOINTS", "http://sapapp1:50013/, unix:/tmp/.sapstream50013"
    )
    monkeypatch.setenv("WLMON_SAPCONTROL_USERNAME", "eppadm")
    monkeypatch.setenv("WLMON_SAPCONTROL_PASSWORD_FILE", str(secret))
    monkeypatch.setenv("WLMON_SAPCONTROL_HOSTS", '{"*": "127.0.0.1"}')
    s = SAPControlSettings()
    assert s.endpoints == ["http://sapapp1:50013/", "unix:/tmp/.sapstream50013"]
    assert s.auth == ("eppadm", "from-a-file")
    assert "from-a-file" not in repr(s) and "from-a-file" not in str(s.model_dump())
    targets = SAPControlScraper(s).targets()
    assert targets[1].endpoint == Endpoint("http://localhost/", uds="/tmp/.sapstream50013")


def test_a_password_needs_a_user(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_PASSWORD", "x")
    with pytest.raises(ValidationError, match="USERNAME"):
        SAPControlSettings()


def test_the_decimal_notation_is_point_or_comma(monkeypatch) -> None:
    """WLMON_SAPCONTROL_DECIMAL reaches the reading the collector converts CCMS values by."""
    monkeypatch.setenv("WLMON_SAPCONTROL_ENDPOINTS", "http://sapapp1:50013/")
    monkeypatch.setenv("WLMON_SAPCONTROL_DECIMAL", "dot")
    with pytest.raises(ValidationError, match="decimal"):
        SAPControlSettings()
    monkeypatch.setenv("WLMON_SAPCONTROL_DECIMAL", "comma")
    scraper = SAPControlScraper(SAPControlSettings(timeout_s=0.5))
    try:
        assert scraper.read().notation == "comma"
    finally:
        scraper.close()


def test_credentials_in_an_endpoint_url_are_refused() -> None:
    with pytest.raises(ValueError, match="credentials"):
        Endpoint("http://eppadm:secret@sapapp1:50013/")


def test_the_model_sapstartsrv_is_off_unless_enabled(monkeypatch) -> None:
    assert SapStartSrvSettings().enabled is False
    monkeypatch.setenv("WLMON_SAPSTARTSRV_TLS_CERT", "/x.pem")
    with pytest.raises(ValidationError, match="TLS_KEY"):
        SapStartSrvSettings()


def test_the_collector_defaults_to_the_models_own_endpoints(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_ENABLED", "true")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_BASE_PORT", "52013")
    config = load_config()
    assert config.sapcontrol.discover == ["http://127.0.0.1:52013/"]
    # Nothing else given: every simulated instance on the model's host, no credentials.
    assert config.sapcontrol.hosts == {"*": "127.0.0.1"} and config.sapcontrol.auth is None


def test_the_models_own_sapstartsrv_lends_its_user_but_given_settings_win(monkeypatch) -> None:
    """`wlmon up` reads its model's sapstartsrv: the source takes the model's user, so its
    protected methods answer; a WLMON_SAPCONTROL_ user or host map is kept as given."""
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_ENABLED", "true")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_BASE_PORT", "52013")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_USERNAME", "wlmon")
    monkeypatch.setenv("WLMON_SAPSTARTSRV_PASSWORD", "model-secret")
    assert load_config().sapcontrol.auth == ("wlmon", "model-secret")
    monkeypatch.setenv("WLMON_SAPCONTROL_USERNAME", "bmkadm")
    monkeypatch.setenv("WLMON_SAPCONTROL_PASSWORD", "own-secret")
    monkeypatch.setenv("WLMON_SAPCONTROL_HOSTS", '{"penguin2": "10.0.0.12"}')
    config = load_config()
    assert config.sapcontrol.auth == ("bmkadm", "own-secret")
    assert config.sapcontrol.hosts == {"penguin2": "10.0.0.12"}


def test_the_cli_port_of_the_models_sapstartsrv_reaches_the_source(monkeypatch) -> None:
    """Issue 25: `--sapstartsrv-port N` served sapstartsrv but the collector read nothing
    (the settings the CLI built never reached the source, which read the environment)."""
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    config = load_config(sapstartsrv_port=52013)
    assert config.sapstartsrv.enabled and config.sapstartsrv.base_port == 52013
    assert config.sapcontrol.discover == ["http://127.0.0.1:52013/"]
    sources = Sources.from_settings(lambda: None, config)
    assert isinstance(sources.sapcontrol, SAPControlScraper)
    assert sources.sapcontrol.settings.discover == ["http://127.0.0.1:52013/"]


def test_the_exporters_log_store_takes_the_sources_system_log(monkeypatch) -> None:
    """The exporter's log sink reaches the sapcontrol source, so SM21's text goes to the log
    store in a running exporter, not only where a test hands the reader a sink."""
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    config = load_config(sapstartsrv_port=52013)
    lines = []

    class Sink:
        def emit(self, labels, line, ts_ns=None) -> None:
            lines.append((labels, line))

    sink = Sink()
    sources = Sources.from_settings(lambda: None, config, log_sink=sink)
    assert sources.sapcontrol._syslog.sink is sink
    assert Sources.from_settings(lambda: None, config).sapcontrol._syslog.sink is None


def test_a_malformed_sapcontrol_setting_stops_nothing_while_the_collector_is_off(
    monkeypatch,
) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_ENDPOINTS", "ftp://nowhere")
    config = load_config()
    assert config.sapcontrol is None
    assert Sources.from_settings(lambda: None, config).sapcontrol is None
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    with pytest.raises(ValidationError, match="WLMON_SAPCONTROL_ENDPOINTS"):
        load_config()


def test_the_collector_on_with_no_sapstartsrv_named_is_an_error(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_SAPCONTROL", "true")
    with pytest.raises(ValueError, match="names no sapstartsrv"):
        load_config()


def test_collectors_switched_by_name_over_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_EXPORTER_COLLECTOR_ST05", "false")
    config = load_config(collectors={"st05": True, "st03": False})
    assert config.exporter.collector_st05 is True and config.exporter.collector_st03 is False


def test_verify_false_with_a_ca_file_is_refused_naming_both(tmp_path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    with pytest.raises(ValidationError) as err:
        SAPControlSettings(discover="https://sapci:50014/", verify=False, ca_file=ca)
    [problem] = err.value.errors()
    assert "WLMON_SAPCONTROL_VERIFY=false" in problem["msg"]
    assert "WLMON_SAPCONTROL_CA_FILE" in problem["msg"]


def test_a_password_in_a_url_is_never_echoed() -> None:
    """The refusal names the setting and the URL without its credentials; pydantic's own
    text (a traceback's) does not carry the input either."""
    with pytest.raises(ValidationError) as err:
        SAPControlSettings(discover="http://misadm:TopSecret9@sapci:50013/")
    assert "TopSecret9" not in str(err.value)
    assert "http://***@sapci:50013/" in err.value.errors()[0]["msg"]


def test_scrub_removes_url_credentials_and_secrets() -> None:
    text = "GET https://u:p%40ss@host:50014/ failed for s3cret"
    assert scrub(text, ["s3cret"]) == "GET https://***@host:50014/ failed for ***"
