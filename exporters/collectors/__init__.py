"""The collectors wlmon exports, with the flag that enables each (see exporters.config)."""

from __future__ import annotations

from exporters.collectors.st03 import ST03Collector

# name -> collector class; each takes a snapshot source. Later collectors (st05,
# dbbuffer, oscounters) join this table.
COLLECTORS = {
    "st03": ST03Collector,
}
