"""The dates Almanac stores lie between the years 1900 and 2999 (docs/api.md).

Far from the ends of the calendar: a date next to year 1 or 9999 breaks local-time display
and the admin's date navigation, and 9999-12-31T23:59-10:00 is year 10000 in UTC, which
PostgreSQL keeps but no reader can load. Events (connectors) and memories share the rule.
"""

from __future__ import annotations

from datetime import date

from almanac.errors import ApplicationError

MIN_YEAR, MAX_YEAR = 1900, 2999


def year_problem(value: date | None, field: str) -> str | None:
    """Why `value` may not be stored (its year out of range), said about `field`; None if it may."""
    if value is None or MIN_YEAR <= value.year <= MAX_YEAR:
        return None
    return f"{field} must lie between the years {MIN_YEAR} and {MAX_YEAR}"


def check_year(value: date | None, field: str) -> None:
    """A service's check: ApplicationError (422) for a date out of range."""
    problem = year_problem(value, field)
    if problem:
        raise ApplicationError(problem, status_code=422)
