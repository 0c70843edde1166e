"""The collectors wlmon exports, with the flag that enables each (see exporters.config)."""

from __future__ import annotations

from exporters.collectors.dbbuffer import DBBufferCollector
from exporters.collectors.oscounters import OSCountersCollector
from exporters.collectors.sapbuffer import SAPBufferCollector
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.collectors.st03 import ST03Collector
from exporters.collectors.st05 import ST05Collector

# name -> collector class; each takes a snapshot source.
COLLECTORS = {
    "st03": ST03Collector,
    "st05": ST05Collector,
    "dbbuffer": DBBufferCollector,
    "sapbuffer": SAPBufferCollector,
    "oscounters": OSCountersCollector,
    # Reads sapstartsrv (real or the model's), not the model: off unless configured.
    "sapcontrol": SAPControlCollector,
}
