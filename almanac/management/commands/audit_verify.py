from django.core.management.base import BaseCommand, CommandError

from almanac.models import Tenant
from almanac.services.audit import audit_chain_tenants, audit_chain_verify


class Command(BaseCommand):
    help = (
        "Walk the audit log's hash chains (one per tenant, one for rows without a tenant) and report "
        "the first deleted, forged or reordered row; prints each chain's head (seq and digest) to keep "
        "elsewhere. Exits non-zero on a problem."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="only this tenant's chain (its slug)")
        parser.add_argument(
            "--expect",
            action="append",
            default=[],
            metavar="SEQ:DIGEST",
            help="a head printed by an earlier run (with --tenant): that row must still be in the "
            "chain with that digest, which catches rows deleted or rewritten at the end",
        )

    def handle(self, tenant, expect, **options):
        if tenant:
            found = Tenant.objects.filter(slug=tenant).first()
            if found is None:
                raise CommandError(f"no tenant {tenant!r}")
            chains, names = [found.pk], {found.pk: found.slug}
        else:
            if expect:
                raise CommandError("--expect needs --tenant: a head belongs to one chain")
            chains = audit_chain_tenants()
            names = dict(Tenant.objects.filter(pk__in=[c for c in chains if c]).values_list("pk", "slug"))
        failed = []
        for chain in chains:
            report = audit_chain_verify(tenant_id=chain)
            label = f"tenant {names.get(chain, chain)}" if chain is not None else "no tenant"
            if report.ok and expect:
                report.problem = _expected_problem(report, expect)
            if report.ok:
                self.stdout.write(
                    f"{label}: ok, {report.rows} rows, head {report.head_seq}:{report.head_digest}"
                )
            else:
                failed.append(label)
                self.stdout.write(f"{label}: FAILED at {report.problem}")
        if failed:
            raise CommandError(f"the audit log does not verify: {', '.join(failed)}")


def _expected_problem(report, expect: list[str]) -> str:
    from almanac.models import AuditEvent

    for item in expect:
        seq, _, digest = item.partition(":")
        if not seq.isdigit() or len(digest) != 64:
            raise CommandError(f"--expect {item!r}: give SEQ:DIGEST as audit_verify printed it")
        row = AuditEvent.objects.filter(tenant_id=report.tenant_id, seq=int(seq)).values("digest").first()
        if row is None:
            return f"the expected head {seq} is gone (the chain ends at {report.head_seq}): rows were deleted"
        if row["digest"] != digest:
            return f"the expected head {seq} has another digest: the chain was rewritten"
    return ""
