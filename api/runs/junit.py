"""A check as JUnit XML, the format CI systems read: one <testsuite> per check, one
<testcase> per criterion, a <failure> for a failed one and <skipped> for one without data
(the layout of the Ant/Jenkins JUnit schema that GitLab, GitHub and Jenkins parse)."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def _describe(c: dict) -> str:
    value = "no data" if c["value"] is None else f"{c['value']:g} {c['unit']}".strip()
    return f"{c['name']}: {value}, bound {c['op']} {c['bound']:g} {c['unit']}".strip()


def to_junit(result: dict) -> str:
    criteria = result["criteria"]
    suites = ET.Element(
        "testsuites",
        name="wlmon check",
        tests=str(len(criteria)),
        failures=str(result["counts"]["failed"]),
        errors="0",
        skipped=str(result["counts"]["skipped"]),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"wlmon check {result['run']}",
        tests=str(len(criteria)),
        failures=str(result["counts"]["failed"]),
        errors="0",
        skipped=str(result["counts"]["skipped"]),
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="run", value=result["run"])
    if result["baseline"]:
        ET.SubElement(props, "property", name="baseline", value=result["baseline"])
    for c in criteria:
        case = ET.SubElement(
            suite, "testcase", classname=f"wlmon.check.{c['source']}", name=c["name"], time="0"
        )
        if c["status"] == "failed":
            failure = ET.SubElement(case, "failure", message=_describe(c), type=c["source"])
            failure.text = f"{_describe(c)}\n{c['detail']}"
        elif c["status"] == "skipped":
            ET.SubElement(case, "skipped", message=c["detail"])
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{_describe(c)}\n{c['detail']}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
