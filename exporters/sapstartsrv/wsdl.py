"""The WSDL the model's sapstartsrv serves at `/?wsdl`: SAP's, cut to the methods it answers.

Built from exporters.sapcontrol.schema so the description and the answers cannot drift:
the same type, element and message names as sapstartsrv's own WSDL (portType
`SAPControlPortType`, binding `SAPControl`, document/literal, soapAction ""), the same
service documentation about 401 and the 5<NN>13/5<NN>14 ports.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from exporters.sapcontrol.schema import NS, OPERATIONS, STRING, TYPES

_XSD = {
    "string": 'type="xsd:string" minOccurs="0" maxOccurs="1" nillable="true"',
    "rstring": 'type="xsd:string" minOccurs="1" maxOccurs="1" nillable="false"',
    "int": 'type="xsd:int" minOccurs="1" maxOccurs="1"',
    "long": 'type="xsd:long" minOccurs="1" maxOccurs="1"',
    "double": 'type="xsd:double" minOccurs="1" maxOccurs="1"',
    "boolean": 'type="xsd:boolean" minOccurs="1" maxOccurs="1"',
    "color": 'type="SAPControl:STATE-COLOR" minOccurs="1" maxOccurs="1"',
    "j2eestate": 'type="SAPControl:J2EE-PSTATE" minOccurs="1" maxOccurs="1"',
    "level": 'type="SAPControl:VISIBLE-LEVEL" minOccurs="1" maxOccurs="1"',
    "hastate": 'type="SAPControl:HAVerificationState" minOccurs="1" maxOccurs="1"',
    "hacategory": 'type="SAPControl:HACheckCategory" minOccurs="1" maxOccurs="1"',
}
_ENUMS = {
    "STATE-COLOR": ("GRAY", "GREEN", "YELLOW", "RED"),
    "J2EE-PSTATE": (
        "J2EE-STOPPED",
        "J2EE-STARTING",
        "J2EE-CORE-RUNNING",
        "J2EE-RUNNING",
        "J2EE-STOPPING",
        "J2EE-MAINTENANCE",
        "J2EE-UNKNOWN",
    ),
    "VISIBLE-LEVEL": ("UNKNOWN", "OPERATOR", "EXPERT", "DEVELOPER"),
    "HAVerificationState": ("HA-SUCCESS", "HA-WARNING", "HA-ERROR"),
    "HACheckCategory": (
        "SAP-CONFIGURATION",
        "SAP-STATE",
        "HA-CONFIGURATION",
        "HA-STATE",
    ),
}
SERVICE_DOC = (
    "The SAPControl webservice can be used to control and monitor a single SAP instance. "
    "Some methods may fail with HTTP error 401 without user authentication. Use HTTP basic "
    "authentication (UTF8 encoded) to provide OS user credentials. By default the service "
    "uses port 5$(SAPSYSTEM)13 for HTTP and 5$(SAPSYSTEM)14 for HTTPS (if SSL is configured "
    "for the instance). This one answers from the wlmon landscape model."
)


def _sequence(fields) -> str:
    return "".join(f'<element name="{n}" {_XSD[t]}/>' for n, t in fields)


def _schema() -> str:
    parts = []
    for name, values in _ENUMS.items():
        enum = "".join(f'<enumeration value="SAPControl-{v}"/>' for v in values)
        parts.append(
            f'<simpleType name="{name}"><restriction base="xsd:string">{enum}'
            "</restriction></simpleType>"
        )
    if any(op.item_type == STRING for op in OPERATIONS.values()):
        parts.append(
            '<complexType name="ArrayOfString"><sequence><element name="item" '
            'type="xsd:string" minOccurs="0" maxOccurs="unbounded" nillable="true"/>'
            "</sequence></complexType>"
        )
    used = sorted({op.item_type for op in OPERATIONS.values() if op.item_type not in ("", STRING)})
    for name in used:
        parts.append(
            f'<complexType name="{name}"><sequence>{_sequence(TYPES[name])}'
            f"</sequence></complexType>"
        )
        array = "ArrayOfInstanceProperties" if name == "InstanceProperty" else f"ArrayOf{name}"
        parts.append(
            f'<complexType name="{array}"><sequence><element name="item" '
            f'type="SAPControl:{name}" minOccurs="0" maxOccurs="unbounded" nillable="true"/>'
            "</sequence></complexType>"
        )
    for op in OPERATIONS.values():
        params = _sequence((n, t) for n, t, _ in op.params)
        parts.append(
            f'<element name="{op.name}"><complexType><sequence>{params}'
            "</sequence></complexType></element>"
        )
        if op.array:
            array = (
                "ArrayOfInstanceProperties"
                if op.item_type == "InstanceProperty"
                else "ArrayOfString"
                if op.item_type == STRING
                else f"ArrayOf{op.item_type}"
            )
            occurs = (
                'minOccurs="1" maxOccurs="1" nillable="false"'
                if op.array_required
                else 'minOccurs="0" maxOccurs="1" nillable="true"'
            )
            out = (
                f'{_sequence(op.fields)}<element name="{op.array}" type="SAPControl:{array}" '
                f"{occurs}/>"
            )
        else:
            out = _sequence(op.fields)
        parts.append(
            f'<element name="{op.response}"><complexType><sequence>{out}'
            "</sequence></complexType></element>"
        )
    return "".join(parts)


def wsdl(location: str) -> bytes:
    """The WSDL with the service address set to `location` (the URL it was fetched from)."""
    messages, ports, bindings = [], [], []
    for op in OPERATIONS.values():
        out_msg = op.response if not op.array else f"{op.name}Response"
        messages.append(
            f'<message name="{op.name}Request"><part name="parameters" '
            f'element="SAPControl:{op.name}"/></message>'
            f'<message name="{out_msg}"><part name="parameters" '
            f'element="SAPControl:{op.response}"/></message>'
        )
        ports.append(
            f'<operation name="{op.name}"><documentation>{escape(op.doc)}</documentation>'
            f'<input message="tns:{op.name}Request"/><output message="tns:{out_msg}"/>'
            "</operation>"
        )
        bindings.append(
            f'<operation name="{op.name}"><SOAP:operation soapAction=""/>'
            '<input><SOAP:body use="literal"/></input>'
            '<output><SOAP:body use="literal"/></output></operation>'
        )
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<definitions name="SAPControl" targetNamespace="{NS}" xmlns:tns="{NS}" '
        'xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
        f'xmlns:SAPControl="{NS}" xmlns:SOAP="http://schemas.xmlsoap.org/wsdl/soap/" '
        'xmlns="http://schemas.xmlsoap.org/wsdl/">'
        f'<types><schema targetNamespace="{NS}" xmlns="http://www.w3.org/2001/XMLSchema" '
        'elementFormDefault="unqualified" attributeFormDefault="unqualified">'
        f"{_schema()}</schema></types>"
        + "".join(messages)
        + '<portType name="SAPControlPortType">'
        + "".join(ports)
        + '</portType><binding name="SAPControl" type="tns:SAPControlPortType">'
        '<SOAP:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>'
        + "".join(bindings)
        + "</binding>"
        f'<service name="SAPControl"><documentation>{escape(SERVICE_DOC)}</documentation>'
        f'<port name="SAPControl" binding="tns:SAPControl"><SOAP:address location='
        f"{quoteattr(location)}/></port></service></definitions>\n"
    )
    return text.encode()
