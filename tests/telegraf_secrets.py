"""What provisioning/telegraf/telegraf.conf says about InfluxDB's password, read from its
text (Telegraf's config is TOML with ${VAR} left unquoted, which a TOML parser refuses)."""

from __future__ import annotations

import re
from pathlib import Path

TELEGRAF_CONF = Path(__file__).resolve().parents[1] / "provisioning" / "telegraf" / "telegraf.conf"


def telegraf_password_reference() -> tuple[str, str]:
    """(the variable naming the secret store's folder, the secret's name) of the InfluxDB
    output's password in provisioning/telegraf/telegraf.conf, read from its text."""
    text = TELEGRAF_CONF.read_text()
    stores = re.findall(r'\[\[secretstores\.docker\]\]\s+id = "(\w+)"\s+path = "\$\{(\w+)\}"', text)
    output = text.split("[[outputs.influxdb]]", 1)[1].split("[[", 1)[0]
    ((ref_store, ref_name),) = re.findall(r'password = "@\{(\w+):(\w+)\}"', output)
    return dict(stores)[ref_store], ref_name
