"""Shared parts of the import_* commands: --tenant, --source, progress bar and summary."""

from __future__ import annotations

import itertools
import time

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.models import RESERVED_SOURCE_NAMES, Event
from connectors.schemas import SOURCE_RE
from connectors.services.importer import ingest_all
from connectors.services.poller import PollError
from connectors.services.sources import source_ensure, sync_success


class ImportCommand(BaseCommand):
    source_kind = ""

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="tenant slug (default: the only tenant)")
        parser.add_argument(
            "--source", default=self.source_kind, help=f"source name (default: {self.source_kind})"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--compile",
            action="store_true",
            help="compile the imported events into the wiki now, in batches (else the workers do)",
        )

    def tenant(self, slug: str | None) -> Tenant:
        if slug:
            tenant = Tenant.objects.filter(slug=slug).first()
            if tenant is None:
                raise CommandError(f"no tenant {slug!r}")
            return tenant
        tenants = list(Tenant.objects.all()[:2])
        if len(tenants) != 1:
            raise CommandError("pass --tenant SLUG (there is not exactly one tenant)")
        return tenants[0]

    def payloads(self, *, tenant: Tenant, source_name: str, options: dict):
        raise NotImplementedError

    def handle(self, **options):
        tenant = self.tenant(options["tenant"])
        name = options["source"]
        if not SOURCE_RE.match(name or "") or name.lower() in RESERVED_SOURCE_NAMES:
            raise CommandError(
                f"--source {name!r}: letters, digits, '_', '.' or '-', and not a reserved name"
            )
        started, since = time.monotonic(), timezone.now()
        try:
            payloads = iter(self.payloads(tenant=tenant, source_name=name, options=options))
            # Reading the first one opens the input: a wrong path, file or URL fails here,
            # before the source is created or anything stored.
            first = next(payloads, None)
            source = source_ensure(tenant=tenant, name=name, kind=self.source_kind)
            payloads = itertools.chain([] if first is None else [first], payloads)
            counts = ingest_all(
                tenant=tenant,
                payloads=self._progress(
                    payloads, source=source, since=since, show=not options["no_progress"]
                ),
                desc=name,
            )
        except (ApplicationError, OSError, ValueError, PollError) as exc:
            # What the operator gave is wrong (a path, a file, a URL): one line, not the file.
            message = str(getattr(exc, "message", exc))
            raise CommandError(message if len(message) <= 500 else message[:500] + " …") from exc
        sync_success(source=source)
        rejected = counts.get("rejected", 0)
        self.stdout.write(
            f"{name}: {counts['accepted']} new events, {counts['duplicates']} duplicates, {rejected} rejected "
            f"(tenant {tenant.slug}, {time.monotonic() - started:.1f}s)"
        )
        if rejected:
            self.stderr.write(f"last rejection: {counts['last_rejection']}")
        self._compiled_line(source=source, since=since, started=started)
        if options["compile"]:
            # The wiki's command, by name: connectors do not import the wiki.
            call_command("wiki_compile", tenant.slug, "--no-people", stdout=self.stdout)

    def _new_events(self, *, source, since):
        return Event.objects.filter(source=source, received_at__gte=since)

    def _progress(self, payloads, *, source, since, show: bool):
        """The payloads, with a bar of events read and, every 2 s, how many the wiki compiled."""
        with tqdm(desc=source.name, unit="event", disable=not show, leave=False) as bar:
            checked = time.monotonic()
            for payload in payloads:
                yield payload
                bar.update(1)
                if time.monotonic() - checked > 2:
                    compiled = self._new_events(source=source, since=since).filter(state=Event.State.COMPILED)
                    bar.set_postfix(compiled=compiled.count(), refresh=False)
                    checked = time.monotonic()

    def _compiled_line(self, *, source, since, started: float) -> None:
        """How far the wiki is: events compiled of those stored, and the time left at the
        workers' rate so far."""
        new = self._new_events(source=source, since=since)
        stored, compiled = new.count(), new.filter(state=Event.State.COMPILED).count()
        elapsed = max(time.monotonic() - started, 1e-6)
        line = f"{source.name}: {compiled}/{stored} of these events compiled into the wiki"
        if compiled < stored:
            rate = compiled / elapsed
            eta = f", ETA {(stored - compiled) / rate:.0f}s at {rate:.0f} events/s" if rate else ""
            line += f"{eta} (the workers compile the rest; --compile or `manage.py wiki_compile` does it now)"
        self.stdout.write(line)
