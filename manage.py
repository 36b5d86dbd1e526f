#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db import OperationalError

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:  # an operator's setting: say which, not a traceback
        sys.exit(f"Almanac is not configured right: {exc}")
    except OperationalError as exc:
        import psycopg

        # Only a connection that failed (psycopg's plain OperationalError): a timeout, a
        # deadlock or a lock wait (its subclasses) is no configuration matter and keeps its traceback.
        if type(exc.__cause__) is not psycopg.OperationalError:
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sys.exit(f"Almanac cannot reach its database: {reason} (check DATABASE_URL)")
