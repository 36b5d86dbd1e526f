"""Run a skill from the command line, e.g. to check the LLM configuration (recorded as an
operator's run: trigger `admin`).

manage.py skill_run summarize '{"text": "...", "max_tokens": 50}'
manage.py skill_run fact_extract --text "我喜欢靠窗的座位。上周五和 Acme 开会。" --session-date 2025-03-20
"""

import json

from django.core.management.base import BaseCommand, CommandError

from almanac.errors import ApplicationError
from skills.models import SkillRun
from skills.services import SkillFailed, skill_run


class Command(BaseCommand):
    help = "Run a skill once and print its output and the SkillRun record."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("input", nargs="?", help="the input as a JSON object")
        parser.add_argument("--text", help="shortcut: the input's text")
        parser.add_argument("--max-tokens", type=int, help="shortcut: the input's max_tokens")
        parser.add_argument("--session-date", help="shortcut: the input's session_date")

    def handle(self, name, input=None, text=None, max_tokens=None, session_date=None, **options):
        try:
            data = json.loads(input) if input else {}
        except ValueError as exc:
            raise CommandError(f"input is not JSON: {exc}") from exc
        extra = {"text": text, "max_tokens": max_tokens, "session_date": session_date}
        data.update({k: v for k, v in extra.items() if v is not None})
        before = SkillRun.objects.order_by("-id").values_list("id", flat=True).first() or 0
        try:
            output = skill_run(name=name, input=data, trigger="admin")
        except (SkillFailed, ApplicationError) as exc:
            self._report(after=before)
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(output, ensure_ascii=False, indent=2))
        self._report(after=before)

    def _report(self, *, after: int):
        """This command's run, if it got as far as one (an unknown skill records none)."""
        run = SkillRun.objects.filter(trigger="admin", id__gt=after).order_by("-id").first()
        if run:
            self.stderr.write(
                f"run #{run.id}: {run.status}, used_llm={run.used_llm}, attempts={run.attempts}, "
                f"{run.duration_ms} ms" + (f"\n{run.error}" if run.error else "")
            )
