"""Runs logged later (`skill_run(log_later=True)`, the context call's page summaries):
written in a batch off the request path, never lost from a transaction, failures at once."""

import threading
import time

import pytest

from almanac.buffer import WriteBuffer
from skills import services
from skills.models import Skill, SkillRun
from skills.services import SkillFailed, skill_run

SUMMARY_INPUT = {"text": "Apollo ships on 3 May. The budget is 120k EUR.", "max_tokens": 20}


@pytest.fixture
def no_timer(settings):
    settings.LLM_BASE_URL = ""
    settings.SKILL_RUN_FLUSH_SECONDS = 3600  # only explicit flushes write
    yield
    services.flush_runs()


@pytest.mark.django_db(transaction=True)
def test_a_successful_run_is_written_by_the_next_flush(no_timer, tenant):
    output = skill_run(
        name="summarize", input=SUMMARY_INPUT, trigger="context", tenant=tenant, log_later=True
    )
    assert "Apollo" in output["summary"]
    assert not SkillRun.objects.exists()  # not on the request path
    assert services.flush_runs() == 1
    run = SkillRun.objects.get()
    assert (run.skill_name, run.status, run.trigger, run.tenant_id) == (
        "summarize",
        "success",
        "context",
        tenant.pk,
    )
    assert run.output == output and run.input == SUMMARY_INPUT


@pytest.mark.django_db(transaction=True)
def test_a_run_logged_later_keeps_a_short_preview_of_a_long_input(no_timer, settings):
    from skills.services import input_digest

    settings.SKILL_RUN_LATER_INPUT_MAX_CHARS = 200
    long_input = {"text": "Apollo ships on 3 May. " * 400, "max_tokens": 20}
    skill_run(name="summarize", input=long_input, log_later=True)
    services.flush_runs()
    run = SkillRun.objects.get()
    assert run.input_truncated and run.input["size"] > 9000 and len(run.input["preview"]) == 200
    assert run.input_digest == input_digest(long_input)  # the digest still covers all of it
    # A run logged at once keeps up to SKILL_RUN_INPUT_MAX_CHARS.
    skill_run(name="summarize", input=long_input)
    assert not SkillRun.objects.latest("id").input_truncated


@pytest.mark.django_db(transaction=True)
def test_a_failed_run_is_written_at_once_with_its_id(no_timer):
    skill_run(name="summarize", input=SUMMARY_INPUT)  # creates the skill row
    Skill.objects.filter(name="summarize").update(enabled=False)
    with pytest.raises(SkillFailed) as info:
        skill_run(name="summarize", input=SUMMARY_INPUT, log_later=True)
    assert SkillRun.objects.get(id=info.value.run_id).status == "failed"


def test_inside_a_transaction_the_run_is_written_with_it(db, no_timer):
    skill_run(name="summarize", input=SUMMARY_INPUT, log_later=True)
    assert SkillRun.objects.count() == 1


def test_the_timer_writes_a_batch_and_a_failing_write_is_logged_not_raised(caplog):
    written, done = [], threading.Event()

    def write(batch):
        written.append(list(batch))
        done.set()
        if batch == ["bad"]:
            raise RuntimeError("database gone")
        return len(batch)

    buffer = WriteBuffer("test rows", write, lambda: 0.05)
    buffer.add(["a"])
    buffer.add(["b", "c"])
    assert done.wait(5) and written == [["a", "b", "c"]]
    buffer.add(["bad"])
    assert buffer.flush() == 0 and "writing 1 buffered test rows failed" in caplog.text
    assert buffer.flush() == 0 and buffer.timer is None  # nothing pending, no timer left


def test_discard_drops_pending_items_and_their_timer():
    written = []
    buffer = WriteBuffer("test rows", lambda batch: written.append(batch) or len(batch), lambda: 0.05)
    buffer.add(["a", "b"])
    assert buffer.discard() == 2 and buffer.timer is None
    time.sleep(0.1)
    assert written == [] and buffer.flush() == 0
