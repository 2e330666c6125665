"""A conformance report three ways (`parley.conformance.report`): the table groups results by
interface and counts passes, failures (MUST among them) and skips; the JSON lists every
result with its check's fields; the JUnit XML has one test case per result, a failure or a
skip where the result is one, and the counts in the suite's attributes. Details with
characters XML and JSON must escape survive each form."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from parley.conformance import Report, as_json, as_junit, as_table
from parley.conformance.results import Check, Level, Result, Scope, Status

URL = "http://agent.example"
JSONRPC = "JSONRPC 1.0 http://agent.example/"
REST = "HTTP+JSON 0.3 http://agent.example/v0"


async def _run(_: object) -> str:
    return ""


def _check(id: str, level: Level = Level.MUST, requirement: str = "R-X-1") -> Check:
    scope = Scope.CARD if id.startswith("card.") else Scope.INTERFACE
    return Check(id, requirement, level, f"title of {id}", scope, _run)


def _report() -> Report:
    return Report(
        URL,
        (
            Result(_check("card.required-fields", requirement="R-DATA-8"), Status.PASS, "ok"),
            Result(_check("send.shape"), Status.PASS, "a Task", JSONRPC),
            Result(_check("stream.order"), Status.FAIL, "status before artifact", JSONRPC),
            Result(_check("auth.challenge", Level.SHOULD), Status.FAIL, "no header", JSONRPC),
            Result(_check("push.config-crud"), Status.SKIP, "push not declared", REST),
        ),
    )


def test_the_table_groups_by_interface_and_counts() -> None:
    lines = as_table(_report()).splitlines()
    assert lines[0] == f"A2A conformance of {URL}"
    headings = [line for line in lines if line.endswith(":") and not line.startswith(" ")]
    assert headings == ["card:", f"{JSONRPC}:", f"{REST}:"]
    assert lines[-1] == "2 passed, 2 failed (1 MUST), 1 skipped"


def test_each_table_row_has_its_mark_level_requirement_id_and_detail() -> None:
    rows = [line.split() for line in as_table(_report()).splitlines() if line.startswith("  ")]
    assert [row[:4] for row in rows] == [
        ["pass", "MUST", "R-DATA-8", "card.required-fields"],
        ["pass", "MUST", "R-X-1", "send.shape"],
        ["FAIL", "MUST", "R-X-1", "stream.order"],
        ["FAIL", "SHOULD", "R-X-1", "auth.challenge"],
        ["skip", "MUST", "R-X-1", "push.config-crud"],
    ]
    assert " ".join(rows[2][4:]) == "status before artifact"


def test_an_interface_heading_is_printed_again_when_the_interface_changes_back() -> None:
    report = Report(
        URL,
        (
            Result(_check("send.shape"), Status.PASS, "", JSONRPC),
            Result(_check("send.terminal"), Status.PASS, "", REST),
            Result(_check("get.not-found"), Status.PASS, "", JSONRPC),
        ),
    )
    headings = [line for line in as_table(report).splitlines() if line.endswith(":")]
    assert headings == [f"{JSONRPC}:", f"{REST}:", f"{JSONRPC}:"]


def test_an_empty_report_still_says_what_was_checked() -> None:
    assert as_table(Report(URL, ())).splitlines() == [
        f"A2A conformance of {URL}",
        "",
        "0 passed, 0 failed (0 MUST), 0 skipped",
    ]


def test_the_json_lists_every_result_with_its_checks_fields() -> None:
    document = json.loads(as_json(_report()))
    assert document["url"] == URL
    assert [entry["id"] for entry in document["checks"]] == [
        "card.required-fields",
        "send.shape",
        "stream.order",
        "auth.challenge",
        "push.config-crud",
    ]
    assert document["checks"][3] == {
        "id": "auth.challenge",
        "requirement": "R-X-1",
        "level": "SHOULD",
        "status": "fail",
        "detail": "no header",
        "interface": JSONRPC,
        "title": "title of auth.challenge",
    }
    assert document["checks"][0]["interface"] == ""


def test_the_junit_suite_counts_and_has_one_case_per_result() -> None:
    suite = ET.fromstring(as_junit(_report()))
    assert suite.tag == "testsuite"
    assert suite.attrib == {
        "name": f"parley check {URL}",
        "tests": "5",
        "failures": "2",
        "skipped": "1",
    }
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("card", "card.required-fields R-DATA-8 MUST"),
        (JSONRPC, "send.shape R-X-1 MUST"),
        (JSONRPC, "stream.order R-X-1 MUST"),
        (JSONRPC, "auth.challenge R-X-1 SHOULD"),
        (REST, "push.config-crud R-X-1 MUST"),
    ]


def test_junit_cases_carry_a_failure_a_skip_or_the_passing_detail() -> None:
    cases = ET.fromstring(as_junit(_report())).findall("testcase")
    passed, failed, skipped = cases[1], cases[2], cases[4]
    assert [child.tag for child in passed] == ["system-out"]
    assert passed.findtext("system-out") == "a Task"
    failure = failed.find("failure")
    assert failure is not None
    assert failure.get("message") == "status before artifact"
    assert failure.text == "title of stream.order"
    skip = skipped.find("skipped")
    assert skip is not None
    assert skip.get("message") == "push not declared"
    assert failed.find("skipped") is None
    assert skipped.find("failure") is None


def test_the_junit_document_declares_itself() -> None:
    """`parley check --junit FILE` writes it as UTF-8, as it says."""
    assert as_junit(Report(URL, ())).lower().startswith("<?xml version='1.0' encoding='utf-8'?>")


details = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r"),
    max_size=40,
)


@given(details, st.sampled_from(Status))
def test_any_detail_survives_json_and_junit(detail: str, status: Status) -> None:
    """Quotes, ampersands, angle brackets and non-ASCII text in a server's answer are
    escaped, not breaking the report."""
    report = Report(URL, (Result(_check("send.shape"), status, detail, JSONRPC),))
    assert json.loads(as_json(report))["checks"][0]["detail"] == detail
    case = ET.fromstring(as_junit(report)).find("testcase")
    assert case is not None
    if status is Status.PASS:
        assert (case.findtext("system-out") or "") == detail
    else:
        child = case.find("failure" if status is Status.FAIL else "skipped")
        assert child is not None
        assert child.get("message") == detail
