"""What metrics follows from the layers below (connected in MetricsConfig.ready)."""

from __future__ import annotations

from django.dispatch import receiver
from django_q.signals import post_execute

from almanac.signals import context_served
from metrics import recorder


@receiver(context_served, dispatch_uid="metrics.context_served")
def context_call_record(sender, **values):
    recorder.record(**values)


@receiver(post_execute, dispatch_uid="metrics.task_done")
def task_count(sender, task, **kwargs):
    from metrics.instruments import TASKS

    TASKS.labels(result="success" if task.get("success") else "failure").inc()
