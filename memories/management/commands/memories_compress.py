from django.core.management.base import BaseCommand

from memories.management.commands._scope import private_scope_of, tenant_id_of
from memories.services.compression import compressed_expire, compressed_expiring, memories_compress_run


class Command(BaseCommand):
    help = (
        "Compress crowded topics of memories into summaries (each shorter than what it replaces, "
        "keeping every fact), then delete originals compressed longer ago than the keep period. "
        "--dry-run shows what would happen and writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="only this tenant (slug)")
        parser.add_argument("--user", help="only this user's private memories (username)")
        parser.add_argument(
            "--dry-run", action="store_true", help="show the groups and tokens; write nothing"
        )

    def handle(self, tenant=None, user=None, dry_run=False, **options):
        tenant_id = tenant_id_of(tenant)
        acl_key = private_scope_of(user, tenant_id) if user else None
        if user and acl_key is None:
            self.stdout.write(f"{user} has no private memories: nothing to do")
            return
        plan = memories_compress_run(tenant_id=tenant_id, acl_key=acl_key, dry_run=dry_run)
        made = 0
        for group in plan:
            after = (
                f"{group.tokens_after} tokens ({group.method})"
                if group.tokens_after is not None
                else "no summary"
            )
            if group.tokens_after is not None and not dry_run:
                after += f" → memory #{group.summary.pk}"
                made += 1
            self.stdout.write(
                f"{group.acl_key} topic {group.topic or '(by embedding)'!s}: {len(group.memories)} memories, "
                f"{group.tokens_before} tokens → {after}"
            )
        expiring = compressed_expiring(tenant_id=tenant_id)
        if acl_key:
            expiring = [(m, held) for m, held in expiring if m.acl == [acl_key]]
        for memory, held in expiring:
            what = "delete (its summary says it)" if held else "back to active (no summary says it)"
            self.stdout.write(f"expired original #{memory.pk}: {what}")
        if dry_run:
            self.stdout.write(
                f"dry run: {len(plan)} group(s), {len(expiring)} expired original(s); nothing written"
            )
            return
        expired = compressed_expire(tenant_id=tenant_id) if not acl_key else 0
        self.stdout.write(f"{made} summary(ies) written, {expired} expired original(s) deleted")
