"""The part of SAP's SAPControl web service interface wlmon speaks, from its WSDL.

Type, element and field names, their order and XSD types are those of the WSDL that
sapstartsrv serves at `/?wsdl` (namespace `urn:SAPControl`, document/literal, soapAction
"", child elements unqualified), as recorded in SUSE/sap_host_exporter (`index.html?wsdl`,
`internal/sapcontrol/webservice.go`). Both sides use this module: the model's sapstartsrv
(exporters.sapstartsrv) encodes with it, the sapcontrol client decodes with it.

A record is a plain dict keyed by the SAP element names (`{"Typ": "DIA", "No": 3, ...}`),
so what the code reads is spelled as SAP spells it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

NS = "urn:SAPControl"
SOAP_ENV = "http://schemas.xmlsoap.org/soap/envelope/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"

Record = dict[str, Any]

# STATE-COLOR enumeration and the numbers sap_host_exporter and the observIQ receiver
# export for it (GRAY 1, GREEN 2, YELLOW 3, RED 4).
GRAY, GREEN, YELLOW, RED = (
    "SAPControl-GRAY",
    "SAPControl-GREEN",
    "SAPControl-YELLOW",
    "SAPControl-RED",
)
STATE_COLOR_CODE = {GRAY: 1, GREEN: 2, YELLOW: 3, RED: 4}

# complexType name -> ((element, xsd type), ...) in WSDL sequence order. xsd types used:
# string, int, long, double, boolean, color (STATE-COLOR), level (VISIBLE-LEVEL).
TYPES: dict[str, tuple[tuple[str, str], ...]] = {
    "OSProcess": (
        ("name", "string"),
        ("description", "string"),
        ("dispstatus", "color"),
        ("textstatus", "string"),
        ("starttime", "string"),
        ("elapsedtime", "string"),
        ("pid", "int"),
    ),
    "SAPInstance": (
        ("hostname", "string"),
        ("instanceNr", "int"),
        ("httpPort", "int"),
        ("httpsPort", "int"),
        ("startPriority", "string"),
        ("features", "string"),
        ("dispstatus", "color"),
    ),
    "InstanceProperty": (
        ("property", "string"),
        ("propertytype", "string"),
        ("value", "string"),
    ),
    "WorkProcess": (
        ("No", "int"),
        ("Typ", "string"),
        ("Pid", "int"),
        ("Status", "string"),
        ("Reason", "string"),
        ("Start", "string"),
        ("Err", "string"),
        ("Sem", "string"),
        ("Cpu", "string"),
        ("Time", "string"),
        ("Program", "string"),
        ("Client", "string"),
        ("User", "string"),
        ("Action", "string"),
        ("Table", "string"),
    ),
    "TaskHandlerQueue": (
        ("Typ", "string"),
        ("Now", "int"),
        ("High", "int"),
        ("Max", "int"),
        ("Writes", "int"),
        ("Reads", "int"),
    ),
    "AlertNode": (
        ("name", "string"),
        ("parent", "int"),
        ("ActualValue", "color"),
        ("description", "string"),
        ("Time", "string"),
        ("AnalyseTool", "string"),
        ("VisibleLevel", "level"),
        ("HighAlertValue", "color"),
        ("AlDescription", "string"),
        ("AlTime", "string"),
        ("Tid", "string"),
    ),
    # ICM (SMICM): its worker threads and the network connections it handles.
    "ICMThread": (
        ("name", "string"),
        ("id", "string"),
        ("requests", "long"),
        ("status", "string"),
        ("requesttype", "string"),
    ),
    "ICMConnection": (
        ("conid", "string"),
        ("protocol", "string"),
        ("role", "string"),
        ("requesttype", "string"),
        ("peer-address", "string"),
        ("peer-port", "int"),
        ("local-address", "string"),
        ("local-port", "int"),
        ("proc-timeout", "int"),
        ("keepalive-timeout", "int"),
        ("connection-time", "string"),
        ("nihdl", "int"),
    ),
}
TYPES["SystemWorkProcess"] = (("Instance", "string"), *TYPES["WorkProcess"])
# The AS Java (J2EE) types of SAP's WSDL, as monitoring tools read them. `j2eestate` is the
# J2EE-PSTATE enumeration (SAPControl-J2EE-STOPPED ... -UNKNOWN).
_J2EE_PROCESS = (
    ("telnetPort", "int"),
    ("name", "string"),
    ("pid", "int"),
    ("type", "string"),
    ("restart", "string"),
    ("exitCode", "string"),
    ("state", "j2eestate"),
    ("statetext", "string"),
    ("startTime", "string"),
    ("elapsedTime", "string"),
    ("restartCount", "int"),
    ("errorCount", "int"),
    ("cpu", "string"),
    ("debug", "string"),
)
_J2EE_THREAD = (
    ("processname", "string"),
    ("startTime", "string"),
    ("updateTime", "string"),
    ("taskupdateTime", "string"),
    ("subtaskupdateTime", "string"),
    ("task", "string"),
    ("subtask", "string"),
    ("name", "string"),
    ("classname", "string"),
    ("user", "string"),
    ("pool", "string"),
    ("state", "string"),
    ("dispstatus", "color"),
)
_J2EE_CACHE_FIGURES = (
    ("processname", "string"),
    ("type", "string"),
    ("size", "long"),
    ("attrSize", "long"),
    ("keysSize", "long"),
    ("cachedObjects", "int"),
    ("usedObjects", "int"),
    ("puts", "int"),
    ("gets", "int"),
    ("hits", "int"),
    ("changes", "int"),
    ("removes", "int"),
    ("evictions", "int"),
    ("instanceInvalidations", "int"),
    ("clusterInvalidations", "int"),
    ("updateTime", "string"),
    ("dispstatus", "color"),
)
TYPES.update(
    {
        "J2EEProcess": _J2EE_PROCESS,
        "J2EEProcess2": (*_J2EE_PROCESS, ("clusterId", "int")),
        "J2EEThread": _J2EE_THREAD,
        "J2EEThread2": (*_J2EE_THREAD, ("index", "int")),
        "J2EECache": (("cachename", "string"), *_J2EE_CACHE_FIGURES),
        "J2EECache2": (("description", "string"), ("owner", "string"), *_J2EE_CACHE_FIGURES),
        "J2EESession": (
            ("processname", "string"),
            ("IdHash", "int"),
            ("size", "int"),
            ("timeout", "int"),
            ("activeRequests", "int"),
            ("startTime", "string"),
            ("updateTime", "string"),
            ("sticky", "string"),
            ("corrupt", "string"),
            ("backingStore", "string"),
        ),
    }
)
TYPES.update(
    {
        "InstanceVersionInfo": (
            ("Filename", "string"),
            ("VersionInfo", "string"),
            ("Time", "string"),
        ),
        # ABAPGetComponentList: one row of the CVERS table (transaction SPAM's list).
        "ABAPComponent": (
            ("component", "string"),
            ("release", "string"),
            ("patchlevel", "string"),
            ("componenttype", "string"),
            ("description", "string"),
        ),
        "AccessPoint": (
            ("address", "string"),
            ("port", "int"),
            ("protocol", "string"),
            ("processname", "string"),
            ("active", "string"),
        ),
    }
)
TYPES["SyslogEntry"] = (
    ("Time", "string"),
    ("Typ", "string"),
    ("Client", "string"),
    ("User", "string"),
    ("Tcode", "string"),
    ("MNo", "string"),
    ("Text", "string"),
    ("Severity", "color"),
)
TYPES["Alert"] = (
    ("Object", "string"),
    ("Attribute", "string"),
    ("Value", "color"),
    ("Description", "string"),
    ("Time", "string"),
    ("Tid", "string"),
    ("Aid", "string"),
)
TYPES["EnqLock"] = (
    ("lock-name", "string"),
    ("lock-arg", "string"),
    ("lock-mode", "string"),
    ("owner", "string"),
    ("owner-vb", "string"),
    ("use-count-owner", "int"),
    ("use-count-owner-vb", "int"),
    ("client", "string"),
    ("user", "string"),
    ("transaction", "string"),
    ("object", "string"),
    ("backup", "boolean"),
)
TYPES["HACheck"] = (
    ("state", "hastate"),
    ("category", "hacategory"),
    ("description", "string"),
    ("comment", "string"),
)
# Arrays of plain strings (ArrayOfString): items are `<item>text</item>`.
STRING = "string"

# The EnqGetStatistic answer is the flat element `EnqStatistic` (not ...Response).
ENQ_STATISTIC: tuple[tuple[str, str], ...] = (
    ("owner-now", "int"),
    ("owner-high", "int"),
    ("owner-max", "int"),
    ("owner-state", "color"),
    ("arguments-now", "int"),
    ("arguments-high", "int"),
    ("arguments-max", "int"),
    ("arguments-state", "color"),
    ("locks-now", "int"),
    ("locks-high", "int"),
    ("locks-max", "int"),
    ("locks-state", "color"),
    ("enqueue-requests", "long"),
    ("enqueue-rejects", "long"),
    ("enqueue-errors", "long"),
    ("dequeue-requests", "long"),
    ("dequeue-errors", "long"),
    ("dequeue-all-requests", "long"),
    ("cleanup-requests", "long"),
    ("backup-requests", "long"),
    ("reporting-requests", "long"),
    ("compress-requests", "long"),
    ("verify-requests", "long"),
    ("lock-time", "double"),
    ("lock-wait-time", "double"),
    ("server-time", "double"),
    ("replication-state", "color"),
)


@dataclass(frozen=True)
class Operation:
    """One web method: its request parameters and the array its response carries."""

    name: str
    doc: str  # the WSDL's <documentation>
    params: tuple[tuple[str, str, str], ...] = ()  # (element, xsd type, default)
    response: str = ""  # response element
    array: str = ""  # element holding the array of items (empty: flat response)
    item_type: str = ""  # complexType of the items
    # A flat response's elements (EnqStatistic), or those before the array.
    fields: tuple[tuple[str, str], ...] = ()
    # The array element is minOccurs="1" nillable="false" (SAP's WSDL, e.g. GetStartProfile).
    array_required: bool = False
    # Changes the instance (Start, Stop, SendSignal): protected whatever the preset.
    control: bool = False


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation(
            "GetProcessList",
            "Returns a list of all processes directly started by the webservice according "
            "to the SAP start profile.",
            response="GetProcessListResponse",
            array="process",
            item_type="OSProcess",
        ),
        Operation(
            "GetInstanceProperties",
            "Returns a list of available instance features and information how to get it.",
            response="GetInstancePropertiesResponse",
            array="properties",
            item_type="InstanceProperty",
        ),
        Operation(
            "GetSystemInstanceList",
            "Returns a list of SAP instances of the SAP system.",
            params=(("timeout", "int", "0"),),
            response="GetSystemInstanceListResponse",
            array="instance",
            item_type="SAPInstance",
        ),
        Operation(
            "ABAPGetWPTable",
            "Returns a list of the ABAP workprocesses (similar to sm50 transaction).",
            response="ABAPGetWPTableResponse",
            array="workprocess",
            item_type="WorkProcess",
        ),
        Operation(
            "ABAPGetSystemWPTable",
            "Returns a list of all or all active ABAP workprocesses in the system (similar "
            "to sm66 transaction).",
            params=(("activeonly", "boolean", "false"),),
            response="ABAPGetSystemWPTableResponse",
            array="workprocess",
            item_type="SystemWorkProcess",
        ),
        Operation(
            "GetQueueStatistic",
            "Returns a list of queue information of work processes and icm (similar to dpmon).",
            response="GetQueueStatisticResponse",
            array="queue",
            item_type="TaskHandlerQueue",
        ),
        Operation(
            "GetAlertTree",
            "Returns CCMS Alert tree as an array, parent-child node relationship is encoded "
            "via the parent index of each node (similar to rz20 transaction).",
            response="GetAlertTreeResponse",
            array="tree",
            item_type="AlertNode",
        ),
        Operation(
            "ICMGetThreadList",
            "Returns a list of threads used by ICM.",
            response="ICMGetThreadListResponse",
            array="thread",
            item_type="ICMThread",
        ),
        Operation(
            "ICMGetConnectionList",
            "Returns a list of incoming network connections handled by ICM.",
            response="ICMGetConnectionListResponse",
            array="connection",
            item_type="ICMConnection",
        ),
        Operation(
            "GetVersionInfo",
            "Returns a list version information for the most important files of the instance",
            response="GetVersionInfoResponse",
            array="version",
            item_type="InstanceVersionInfo",
        ),
        Operation(
            "ABAPGetComponentList",
            "Returns a list of installed ABAP components in the system as defined in CVERS "
            "database table.",
            response="ABAPGetComponentListResponse",
            array="component",
            item_type="ABAPComponent",
        ),
        Operation(
            "GetEnvironment",
            "Returns the process environment as an array of strings.",
            response="GetEnvironmentResponse",
            array="env",
            item_type=STRING,
        ),
        Operation(
            "ParameterValue",
            "Returns a SAP profile parameter value for a given profile parameter. If the given "
            "profile parameter is empty it returns a string with all known parameter value "
            "pairs separated by newline.",
            params=(("parameter", "rstring", ""),),
            response="ParameterValueResponse",
            fields=(("value", "string"),),
        ),
        Operation(
            "GetAccessPointList",
            "Returns a list of instance network access points.",
            response="GetAccessPointListResponse",
            array="accesspoint",
            item_type="AccessPoint",
        ),
        Operation(
            "GetAlerts",
            "Returns a list of all CCMS alerts for a given node and it's child nodes.",
            params=(("RootTid", "string", ""),),
            response="GetAlertsResponse",
            fields=(("RootTidName", "string"),),
            array="alert",
            item_type="Alert",
            array_required=True,
        ),
        Operation(
            "GetStartProfile",
            "Returns start profile name and content as array of lines.",
            response="GetStartProfileResponse",
            fields=(("name", "string"),),
            array="lines",
            item_type=STRING,
            array_required=True,
        ),
        Operation(
            "HACheckConfig",
            "Checks high availability configurration and status of the system.",
            response="HACheckConfigResponse",
            array="check",
            item_type="HACheck",
        ),
        Operation(
            "HACheckFailoverConfig",
            "Checks HA failover third party configuration and status of an instnace.",
            response="HACheckFailoverConfigResponse",
            array="check",
            item_type="HACheck",
        ),
        Operation(
            "HAGetFailoverConfig",
            "Returns HA failover third party information.",
            response="HAGetFailoverConfigResponse",
            fields=(
                ("HAActive", "boolean"),
                ("HAProductVersion", "string"),
                ("HASAPInterfaceVersion", "string"),
                ("HADocumentation", "string"),
                ("HAActiveNode", "string"),
            ),
            array="HANodes",
            item_type=STRING,
            array_required=True,
        ),
        Operation(
            "ABAPReadSyslog",
            "Reads the SAP ABAP Syslog and returns it as an array of entries (similar to sm21 "
            "transaction).",
            response="ABAPReadSyslogResponse",
            array="log",
            item_type="SyslogEntry",
        ),
        # AS Java (J2EE): an ABAP-only instance, as every instance of the model is, answers
        # each with a fault (exporters/sapstartsrv/server.py).
        *(
            Operation(name, doc, response=f"{name}Response", array=array, item_type=item)
            for name, doc, array, item in (
                (
                    "J2EEGetProcessList",
                    "Returns a list of J2EE processes controlled by jcontrol (superseded by "
                    "J2EEGetProcessList2).",
                    "process",
                    "J2EEProcess",
                ),
                (
                    "J2EEGetProcessList2",
                    "Returns a list of J2EE processes controlled by jcontrol (supersedes "
                    "J2EEGetProcessList).",
                    "process",
                    "J2EEProcess2",
                ),
                (
                    "J2EEGetThreadList",
                    "Returns a list of threads in the J2EE instance (superseded by "
                    "J2EEGetThreadList2).",
                    "thread",
                    "J2EEThread",
                ),
                (
                    "J2EEGetThreadList2",
                    "Returns a list of threads in the J2EE instance (supersedes "
                    "J2EEGetThreadList).",
                    "thread",
                    "J2EEThread2",
                ),
                (
                    "J2EEGetSessionList",
                    "Returns a list of (HTTP) sessions in the J2EE instance (superseded by "
                    "J2EEGetWebSessionList, J2EEGetWebSessionList2).",
                    "session",
                    "J2EESession",
                ),
                (
                    "J2EEGetCacheStatistic",
                    "Returns a list of caches in the J2EE instance (superseded by "
                    "J2EEGetCacheStatistic2).",
                    "cache",
                    "J2EECache",
                ),
                (
                    "J2EEGetCacheStatistic2",
                    "Returns a list of caches in the J2EE instance (supersedes "
                    "J2EEGetCacheStatistic).",
                    "cache",
                    "J2EECache2",
                ),
            )
        ),
        Operation(
            "EnqGetLockTable",
            "Returns enque locking table.",
            response="EnqGetLockTableResponse",
            array="lock",
            item_type="EnqLock",
        ),
        Operation(
            "EnqGetStatistic",
            "Returns enque statistic.",
            response="EnqStatistic",
            fields=ENQ_STATISTIC,
        ),
        # Instance control, as `sapcontrol -function Start/Stop/SendSignal` calls it; the
        # answers are empty elements (SAP's WSDL), the effect shows in GetProcessList.
        Operation(
            "Start",
            "Triggers an instance start and returns immediately.",
            params=(("runlevel", "string", ""),),
            response="StartResponse",
            control=True,
        ),
        Operation(
            "Stop",
            "Triggers an instance stop and returns immediately.",
            params=(("softtimeout", "int", "0"), ("IsSystemStop", "int", "0")),
            response="StopResponse",
            control=True,
        ),
        Operation(
            "SendSignal",
            "Sends a given OS signal to a given process. The signal can be given by name or "
            "number.",
            params=(("pid", "int", "0"), ("signal", "string", "")),
            response="SendSignalResponse",
            control=True,
        ),
    )
}


class SOAPFault(Exception):
    """A SOAP 1.1 fault the service answered (faultstring, e.g. 'Invalid Credentials')."""

    def __init__(self, faultstring: str, faultcode: str = "SOAP-ENV:Server") -> None:
        super().__init__(faultstring)
        self.faultstring = faultstring
        self.faultcode = faultcode


# ------------------------------------------------------------------------- encoding
# gSOAP-style prefixes, as sapstartsrv writes them; built as text so no global
# ElementTree namespace registry is touched.
_ENVELOPE_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    f'<SOAP-ENV:Envelope xmlns:SOAP-ENV="{SOAP_ENV}" xmlns:xsi="{XSI}" '
    f'xmlns:SAPControl="{NS}"><SOAP-ENV:Body>'
)
_ENVELOPE_CLOSE = "</SOAP-ENV:Body></SOAP-ENV:Envelope>"


def _text(value: Any, xsd: str) -> str:
    if xsd == "boolean":
        return "true" if value else "false"
    if xsd == "double":
        return repr(float(value))
    return escape(str(value))


def _fields(fields: tuple[tuple[str, str], ...], record: Record) -> str:
    # Absent (None) values are left out, as gSOAP leaves out nil strings.
    return "".join(
        f"<{name}>{_text(record[name], xsd)}</{name}>"
        for name, xsd in fields
        if record.get(name) is not None
    )


def _envelope(body: str) -> bytes:
    return (_ENVELOPE_OPEN + body + _ENVELOPE_CLOSE).encode()


def encode_request(operation: str, **params: Any) -> bytes:
    op = OPERATIONS[operation]
    inner = "".join(
        f"<{name}>{_text(params.get(name, default), xsd)}</{name}>"
        for name, xsd, default in op.params
    )
    return _envelope(f"<SAPControl:{op.name}>{inner}</SAPControl:{op.name}>")


def encode_response(operation: str, payload: list[Record] | Record) -> bytes:
    """The response envelope of `operation`: a list of items, or EnqStatistic's fields."""
    op = OPERATIONS[operation]
    if op.array and op.fields:  # fields, then the array: a dict holding both
        head, rows = _fields(op.fields, payload), payload[op.array]
    elif op.array:
        head, rows = "", payload
    else:
        return _envelope(
            f"<SAPControl:{op.response}>{_fields(op.fields, payload or {})}"
            f"</SAPControl:{op.response}>"
        )
    if op.item_type == STRING:
        items = "".join(f"<item>{escape(str(item))}</item>" for item in rows)
    else:
        fields = TYPES[op.item_type]
        items = "".join(f"<item>{_fields(fields, item)}</item>" for item in rows)
    inner = f"{head}<{op.array}>{items}</{op.array}>"
    return _envelope(f"<SAPControl:{op.response}>{inner}</SAPControl:{op.response}>")


def encode_fault(faultstring: str, faultcode: str = "SOAP-ENV:Server") -> bytes:
    return _envelope(
        f"<SOAP-ENV:Fault><faultcode>{escape(faultcode)}</faultcode>"
        f"<faultstring>{escape(faultstring)}</faultstring></SOAP-ENV:Fault>"
    )


# ------------------------------------------------------------------------- decoding
def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _body(xml: bytes) -> ET.Element:
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ValueError(f"not XML: {exc}") from exc
    if _local(root.tag) == "Envelope":
        body = next((c for c in root if _local(c.tag) == "Body"), None)
        if body is None or len(body) == 0:
            raise ValueError("SOAP envelope without a Body element")
        root = body[0]
    if _local(root.tag) == "Fault":
        raise SOAPFault(
            (root.findtext("faultstring") or "").strip() or "unknown fault",
            (root.findtext("faultcode") or "").strip(),
        )
    return root


def _value(text: str | None, xsd: str) -> Any:
    text = (text or "").strip()  # "rstring": a string the WSDL requires (nillable="false")
    if xsd in ("int", "long"):
        return int(text) if text else 0
    if xsd == "double":
        return float(text) if text else 0.0
    if xsd == "boolean":
        return text.lower() in ("true", "1")
    return text


def _answered(text: str | None, xsd: str) -> Any:
    """A response field's value; None where it carries no number or colour (an element
    left out or empty is never read as 0: state 0 is no STATE-COLOR)."""
    if xsd in ("string", "rstring"):
        return (text or "").strip()
    if text is None or not text.strip():
        return None
    try:
        return _value(text, xsd)
    except ValueError:
        return None


def _read(element: ET.Element, fields: tuple[tuple[str, str], ...]) -> Record:
    """A record with every field of the type: strings '' where absent (gSOAP leaves out nil
    strings), numbers and colours None where absent or not a number."""
    present = {_local(c.tag): c.text for c in element}
    return {name: _answered(present.get(name), xsd) for name, xsd in fields}


SOAP12_ENV = "http://www.w3.org/2003/05/soap-envelope"
# The fault texts gSOAP (sapstartsrv's SOAP stack) answers a request it cannot take with.
VERSION_MISMATCH = "SOAP version mismatch or no SOAP message"


def no_method(name: str) -> str:
    return f"Method '{name}' not implemented: method name or namespace not recognized"


def decode_request(xml: bytes) -> tuple[str, Record]:
    """(operation, parameters) of a SOAP 1.1 request envelope. Raises SOAPFault as gSOAP
    answers: VersionMismatch for a SOAP 1.2 (or no) envelope, Client for an operation it
    does not serve or one outside the urn:SAPControl namespace."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ValueError(f"not XML: {exc}") from exc
    if root.tag != f"{{{SOAP_ENV}}}Envelope":
        raise SOAPFault(VERSION_MISMATCH, "SOAP-ENV:VersionMismatch")
    body = _body(xml)
    name = _local(body.tag)
    op = OPERATIONS.get(name)
    if op is None or body.tag != f"{{{NS}}}{name}":
        # gSOAP names the element as the request wrote it, prefix included.
        written = re.search(rb"<([\w.-]+:)?" + re.escape(name.encode()) + rb"[\s/>]", xml)
        qname = written.group(0)[1:-1].decode() if written else name
        raise SOAPFault(no_method(qname), "SOAP-ENV:Client")
    present = {_local(c.tag): c.text for c in body}
    return name, {p: _value(present.get(p, d), t) for p, t, d in op.params}


def decode_response(operation: str, xml: bytes) -> list[Record] | Record:
    """The items (or EnqStatistic's fields) of a response; SOAPFault if it is a fault."""
    op = OPERATIONS[operation]
    body = _body(xml)
    if _local(body.tag) != op.response:
        raise ValueError(f"{operation}: expected {op.response}, got {_local(body.tag)}")
    if not op.array:
        return _read(body, op.fields)
    array = next((c for c in body if _local(c.tag) == op.array), None)
    items = [item for item in (array if array is not None else []) if _local(item.tag) == "item"]
    if op.item_type == STRING:
        rows: list = [(item.text or "").strip() for item in items]
    else:
        rows = [_read(item, TYPES[op.item_type]) for item in items]
    if op.fields:  # fields and the array: one record holding both
        return {**_read(body, op.fields), op.array: rows}
    return rows
