"""`parley check`: conformance of any A2A agent, read off the wire. Checks are small
registered functions, each citing its REFERENCE line (R-…) and level; the runner reads the
card and runs them on every HTTP interface it lists; reports are a table, JSON or JUnit."""

from parley.conformance.report import as_json, as_junit, as_table
from parley.conformance.results import Check, Level, Result, Status
from parley.conformance.runner import CHECKS, Report, check_agent

__all__ = [
    "CHECKS",
    "Check",
    "Level",
    "Report",
    "Result",
    "Status",
    "as_json",
    "as_junit",
    "as_table",
    "check_agent",
]
