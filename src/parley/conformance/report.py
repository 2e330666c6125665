"""A report three ways: a readable table, JSON (`{"checks": [...]}`) and JUnit XML (one
test case per result, so CI shows each rule)."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from parley.conformance.results import Result, Status
from parley.conformance.runner import Report

_MARKS = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.SKIP: "skip"}


def as_json(report: Report) -> str:
    return json.dumps(
        {"url": report.url, "checks": [_entry(result) for result in report.results]}, indent=2
    )


def _entry(result: Result) -> dict[str, str]:
    check = result.check
    return {
        "id": check.id,
        "requirement": check.requirement,
        "level": check.level.value,
        "status": result.status.value,
        "detail": result.detail,
        "interface": result.interface,
        "title": check.title,
    }


def as_table(report: Report) -> str:
    lines = [f"A2A conformance of {report.url}"]
    current = None
    for result in report.results:
        if result.interface != current:
            current = result.interface
            lines.append("")
            lines.append(f"{current or 'card'}:")
        check = result.check
        lines.append(
            f"  {_MARKS[result.status]:<4}  {check.level.value:<6}  {check.requirement:<11}"
            f"  {check.id:<20}  {result.detail}"
        )
    counts = {status: sum(r.status is status for r in report.results) for status in Status}
    must = sum(result.must_failed for result in report.results)
    lines.append("")
    lines.append(
        f"{counts[Status.PASS]} passed, {counts[Status.FAIL]} failed ({must} MUST), "
        f"{counts[Status.SKIP]} skipped"
    )
    return "\n".join(lines)


def as_junit(report: Report) -> str:
    failures = sum(r.status is Status.FAIL for r in report.results)
    skipped = sum(r.status is Status.SKIP for r in report.results)
    suite = ET.Element(
        "testsuite",
        name=f"parley check {report.url}",
        tests=str(len(report.results)),
        failures=str(failures),
        skipped=str(skipped),
    )
    for result in report.results:
        check = result.check
        case = ET.SubElement(
            suite,
            "testcase",
            classname=result.interface or "card",
            name=f"{check.id} {check.requirement} {check.level.value}",
        )
        if result.status is Status.FAIL:
            ET.SubElement(case, "failure", message=result.detail).text = check.title
        elif result.status is Status.SKIP:
            ET.SubElement(case, "skipped", message=result.detail)
        else:
            ET.SubElement(case, "system-out").text = result.detail
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
