from django.core.management.base import BaseCommand

from memories.management.commands._scope import tenant_id_of
from memories.services.decay import decay_candidates, memories_decay


class Command(BaseCommand):
    help = (
        "Archive active memories not recalled for the tenant's decay period whose importance is below its "
        "decay threshold (MEMORY_DECAY_AFTER_DAYS, MEMORY_DECAY_BELOW_IMPORTANCE, or the tenant's own "
        "lifecycle settings); kept and restorable, no longer retrieved. --dry-run lists them and writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="only this tenant (slug)")
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would be archived; write nothing"
        )

    def handle(self, tenant=None, dry_run=False, **options):
        tenant_id = tenant_id_of(tenant)
        rows = decay_candidates(tenant_id=tenant_id).defer("embedding").order_by("pk")
        for memory in rows:
            last = memory.last_access.date().isoformat() if memory.last_access else "never"
            self.stdout.write(
                f"#{memory.pk} {memory.acl[0]} importance {memory.importance:.2f}, last recalled {last}: "
                f"{memory.content[:60]!r}"
            )
        if dry_run:
            self.stdout.write(f"dry run: {rows.count()} memory(ies) would be archived; nothing written")
            return
        self.stdout.write(f"{memories_decay(tenant_id=tenant_id)} memory(ies) archived")
