"""A check as JUnit XML, the format CI systems read: one <testsuite> per check, one
<testcase> per criterion, a <failure> for a failed one and <skipped> for one without data
(the layout of the Ant/Jenkins JUnit schema that GitLab, GitHub and Jenkins parse)."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def _describe(c: dict) -> str:
    value = "no data" if c["value"] is None else f"{c['value']:g} {c['unit']}".strip()
    return f"{c['name']}: {value}, bound {c['op']} {c['bound']:g} {c['unit']}".strip()


def _suites(run: str, tests: int, failures: int, errors: int, skipped: int):
    """<testsuites> holding one <testsuite>, both with the counts."""
    counts = {
        "tests": str(tests),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
    }
    suites = ET.Element("testsuites", name="wlmon check", **counts)
    suite = ET.SubElement(suites, "testsuite", name=f"wlmon check {run}", **counts, time="0")
    return suites, suite


def _text(suites: ET.Element) -> str:
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def to_junit(result: dict) -> str:
    criteria = result["criteria"]
    n = result["counts"]
    suites, suite = _suites(result["run"], len(criteria), n["failed"], 0, n["skipped"])
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
    return _text(suites)


def junit_error(run: str, message: str) -> str:
    """A check that could not run (bad input): one <testcase> with an <error>, so CI shows
    why rather than a missing file."""
    suites, suite = _suites(run, 1, 0, 1, 0)
    case = ET.SubElement(suite, "testcase", classname="wlmon.check", name="check", time="0")
    error = ET.SubElement(case, "error", message=message, type="bad input")
    error.text = message
    return _text(suites)
