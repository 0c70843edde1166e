"""Localized PDH counter names (a German Windows' typeperf/relog/logman) and the English
names the import stores them under, so a German capture gives the same standard rows and
the same figure names as an English one. The table docs/imports.md prints; names are
matched without regard to case. A name not listed is kept as written."""

from __future__ import annotations

# German object name -> English object name.
OBJECTS = {
    "prozessor": "Processor",
    "prozessorinformationen": "Processor Information",
    "arbeitsspeicher": "Memory",
    "speicher": "Memory",
    "physikalischer datenträger": "PhysicalDisk",
    "logischer datenträger": "LogicalDisk",
    "netzwerkschnittstelle": "Network Interface",
    "netzwerkadapter": "Network Adapter",
    "prozess": "Process",
    "system": "System",
    "auslagerungsdatei": "Paging File",
}
# Per English object: German counter name -> English counter name.
COUNTERS = {
    "Processor": {
        "prozessorzeit (%)": "% Processor Time",
        "benutzerzeit (%)": "% User Time",
        "privilegierte zeit (%)": "% Privileged Time",
        "interruptzeit (%)": "% Interrupt Time",
        "leerlaufzeit (%)": "% Idle Time",
        "interrupts/s": "Interrupts/sec",
        "dpc-zeit (%)": "% DPC Time",
    },
    "Memory": {
        "verfügbare mb": "Available MBytes",
        "verfügbare kb": "Available KBytes",
        "verfügbare bytes": "Available Bytes",
        "seiten/s": "Pages/sec",
        "seitenfehler/s": "Page Faults/sec",
        "zugesicherte verwendete bytes": "Committed Bytes",
        "zugesicherte bytes": "Committed Bytes",
        "cachebytes": "Cache Bytes",
        "nicht ausgelagerte poolbytes": "Pool Nonpaged Bytes",
        "poolbytes (nicht ausgelagert)": "Pool Nonpaged Bytes",
        "seiteneingaben/s": "Pages Input/sec",
    },
    "PhysicalDisk": {
        "mittlere warteschlangenlänge des datenträgers": "Avg. Disk Queue Length",
        "durchschnittl. warteschlangenlänge des datenträgers": "Avg. Disk Queue Length",
        "aktuelle warteschlangenlänge": "Current Disk Queue Length",
        "mittlere sek./lesevorgänge": "Avg. Disk sec/Read",
        "mittlere sek./schreibvorgänge": "Avg. Disk sec/Write",
        "mittlere sek./übertragungen": "Avg. Disk sec/Transfer",
        "lesevorgänge/s": "Disk Reads/sec",
        "schreibvorgänge/s": "Disk Writes/sec",
        "zeit (%)": "% Disk Time",
        "datenträgerzeit (%)": "% Disk Time",
        "leerlaufzeit (%)": "% Idle Time",
        "bytes gelesen/s": "Disk Read Bytes/sec",
        "bytes geschrieben/s": "Disk Write Bytes/sec",
    },
    "LogicalDisk": {
        "freier speicherplatz (%)": "% Free Space",
        "freie megabytes": "Free Megabytes",
        "mittlere warteschlangenlänge des datenträgers": "Avg. Disk Queue Length",
        "mittlere sek./lesevorgänge": "Avg. Disk sec/Read",
        "mittlere sek./schreibvorgänge": "Avg. Disk sec/Write",
    },
    "Network Interface": {
        "bytes gesamt/s": "Bytes Total/sec",
        "empfangene bytes/s": "Bytes Received/sec",
        "bytes empfangen/s": "Bytes Received/sec",
        "gesendete bytes/s": "Bytes Sent/sec",
        "bytes gesendet/s": "Bytes Sent/sec",
        "pakete/s": "Packets/sec",
        "länge der ausgabewarteschlange": "Output Queue Length",
        "aktuelle bandbreite": "Current Bandwidth",
    },
    "Process": {
        "prozessorzeit (%)": "% Processor Time",
        "arbeitsseiten": "Working Set",
        "private bytes": "Private Bytes",
        "e/a-datenvorgänge/s": "IO Data Operations/sec",
        "threadanzahl": "Thread Count",
        "handleanzahl": "Handle Count",
    },
    "System": {
        "prozessor-warteschlangenlänge": "Processor Queue Length",
        "kontextwechsel/s": "Context Switches/sec",
        "threads": "Threads",
        "prozesse": "Processes",
        "systembetriebszeit": "System Up Time",
    },
    "Paging File": {"belegung (%)": "% Usage", "maximale belegung (%)": "% Usage Peak"},
}
COUNTERS["Processor Information"] = COUNTERS["Processor"]
COUNTERS["Network Adapter"] = COUNTERS["Network Interface"]


def english(obj: str, counter: str) -> tuple[str, str, bool]:
    """(object, counter, translated?) in English for a path's object and counter."""
    eng_obj = OBJECTS.get(obj.strip().lower())
    if eng_obj is None:
        return obj, counter, False
    eng_counter = COUNTERS.get(eng_obj, {}).get(counter.strip().lower())
    return eng_obj, eng_counter or counter, True
