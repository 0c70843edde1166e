"""Windows time-zone names as PDH writes them in a PerfMon header ("W. Europe Standard
Time", "Eastern Daylight Time", the German display names) and the IANA zone with the same
rules (after CLDR's windowsZones table, the common zones only): what lets an import place a
sample on either side of a daylight-saving change. A name not listed leaves the capture on
the header's fixed bias, saying so."""

from __future__ import annotations

from zoneinfo import ZoneInfo

# Windows zone id (its standard name) -> IANA zone of CLDR's "001" territory.
WINDOWS = {
    "UTC": "UTC",
    "Coordinated Universal Time": "UTC",
    "GMT": "Europe/London",
    "Greenwich": "Atlantic/Reykjavik",
    "W. Europe": "Europe/Berlin",
    "Central Europe": "Europe/Budapest",
    "Central European": "Europe/Warsaw",
    "Romance": "Europe/Paris",
    "E. Europe": "Europe/Chisinau",
    "FLE": "Europe/Kiev",
    "GTB": "Europe/Bucharest",
    "Turkey": "Europe/Istanbul",
    "Russian": "Europe/Moscow",
    "Israel": "Asia/Jerusalem",
    "Egypt": "Africa/Cairo",
    "South Africa": "Africa/Johannesburg",
    "Arabian": "Asia/Dubai",
    "Pakistan": "Asia/Karachi",
    "India": "Asia/Kolkata",
    "SE Asia": "Asia/Bangkok",
    "China": "Asia/Shanghai",
    "Singapore": "Asia/Singapore",
    "Taipei": "Asia/Taipei",
    "Tokyo": "Asia/Tokyo",
    "Korea": "Asia/Seoul",
    "W. Australia": "Australia/Perth",
    "Cen. Australia": "Australia/Adelaide",
    "E. Australia": "Australia/Brisbane",
    "AUS Eastern": "Australia/Sydney",
    "New Zealand": "Pacific/Auckland",
    "Hawaiian": "Pacific/Honolulu",
    "Alaskan": "America/Anchorage",
    "Pacific": "America/Los_Angeles",
    "US Mountain": "America/Phoenix",
    "Mountain": "America/Denver",
    "Central": "America/Chicago",
    "Central America": "America/Guatemala",
    "Central Standard Time (Mexico)": "America/Mexico_City",
    "Canada Central": "America/Regina",
    "Eastern": "America/New_York",
    "US Eastern": "America/Indianapolis",
    "Atlantic": "America/Halifax",
    "SA Pacific": "America/Bogota",
    "E. South America": "America/Sao_Paulo",
    "Argentina": "America/Buenos_Aires",
}
# Display names of a German Windows (what PDH writes there), standard and summer.
GERMAN = {
    "Mitteleuropäische Zeit": "Europe/Berlin",
    "Mitteleuropäische Sommerzeit": "Europe/Berlin",
    "Westeuropäische Zeit": "Europe/London",
    "Westeuropäische Sommerzeit": "Europe/London",
    "Osteuropäische Zeit": "Europe/Bucharest",
    "Osteuropäische Sommerzeit": "Europe/Bucharest",
    "Koordinierte Weltzeit": "UTC",
}


def iana(zone: str) -> ZoneInfo | None:
    """The IANA zone for a PDH header's zone name, None if not listed."""
    name = zone.strip()
    if name in GERMAN:
        return ZoneInfo(GERMAN[name])
    if name in WINDOWS:
        return ZoneInfo(WINDOWS[name])
    for suffix in (" Standard Time", " Daylight Time", " Summer Time"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if base in WINDOWS:
                return ZoneInfo(WINDOWS[base])
    return None
