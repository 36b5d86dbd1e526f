"""contract_clauses: offline rules, the LLM path (validated, its values read again), the
fallback, and the method each memory records."""

import json

import pytest

from documents.services.documents import document_upload
from memories.models import Memory
from skills.models import SkillRun
from skills.services import skill_run
from tests.documents.contracts import EN_PAGES, ZH_PAGES

pytestmark = pytest.mark.django_db

PAGES = [{"page": i, "text": text} for i, text in enumerate(EN_PAGES, start=1)]
LLM_REPLY = {
    "clauses": [
        {"type": "fee", "text": "msa.pdf: the annual fee is USD 120,000.", "page": 2,
         "quote": "Customer shall pay Provider an annual subscription fee of USD 120,000.",
         "date": None, "amount": "USD 120,000 per year", "duration": None, "value": None},
        {"type": "notice", "text": "msa.pdf: notice of non-renewal is due by 2026-12-30.", "page": 1,
         "quote": "...", "date": "2026-12-30", "amount": None, "duration": "sixty (60) days", "value": None},
    ]
}  # fmt: skip


def test_offline_the_rules_read_every_clause_in_english_and_chinese():
    english = skill_run(name="contract_clauses", input={"pages": PAGES, "title": "msa.pdf"})
    assert english["method"] == "rules" and not english.used_llm
    assert {c["type"] for c in english["clauses"]} == {
        "parties", "start_date", "term", "renewal", "notice", "fee", "payment_terms", "termination", "governing_law",
    }  # fmt: skip
    zh_pages = [{"page": i, "text": text} for i, text in enumerate(ZH_PAGES, start=1)]
    chinese = skill_run(name="contract_clauses", input={"pages": zh_pages, "title": "合同"})
    by_type = {c["type"]: c for c in chinese["clauses"]}
    assert by_type["notice"]["text"].startswith("《合同》通知期：三十日，2027-12-01")
    assert by_type["fee"]["amount"] == "500000·cny"


def test_a_contract_without_clauses_gives_none():
    output = skill_run(
        name="contract_clauses", input={"pages": [{"page": 1, "text": "Lunch menu: soup, bread."}]}
    )
    assert output["clauses"] == []


def test_bad_input_names_the_field():
    with pytest.raises(Exception) as refused:
        skill_run(name="contract_clauses", input={"pages": [{"page": 0, "text": "x"}]})
    assert refused.value.status_code == 422 and "page" in refused.value.message


def test_the_llm_output_is_validated_and_its_values_read_again(chat_server):
    chat_server.script = [json.dumps(LLM_REPLY)]
    output = skill_run(name="contract_clauses", input={"pages": PAGES, "title": "msa.pdf"})
    assert output.used_llm and output["method"] == "llm"
    fee, notice = output["clauses"]
    assert fee["amount"] == "120000·usd/year" and notice["duration"] == "60 days"
    assert "--- page 2 ---" in chat_server.user_messages(0)[0]


def test_a_failing_llm_falls_back_to_the_rules_and_says_so(chat_server):
    chat_server.script = ["not json at all"] * 10
    output = skill_run(name="contract_clauses", input={"pages": PAGES, "title": "msa.pdf"})
    assert not output.used_llm and output["method"] == "rules" and len(output["clauses"]) == 9
    assert SkillRun.objects.get(skill_name="contract_clauses").status == "fallback"


def test_a_page_the_contract_does_not_have_is_sent_back(chat_server):
    chat_server.script = [json.dumps(LLM_REPLY), json.dumps({"clauses": LLM_REPLY["clauses"][1:]})]
    output = skill_run(name="contract_clauses", input={"pages": PAGES[:1], "title": "msa.pdf"})
    assert output.used_llm and [c["type"] for c in output["clauses"]] == ["notice"]
    assert "Pages [2] are not in the contract" in json.dumps(chat_server.requests[1]["messages"])


def test_an_uploaded_contract_keeps_the_method_that_read_it(
    chat_server, alice, django_capture_on_commit_callbacks
):
    one_page = [{**clause, "page": 1} for clause in LLM_REPLY["clauses"]]  # a text file is one page
    chat_server.script = [json.dumps({"clauses": one_page})]
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = document_upload(user=alice, data="\n".join(EN_PAGES).encode(), filename="msa.txt")
    kept = Memory.objects.filter(meta__document_id=document.pk)
    assert {m.meta["method"] for m in kept} == {"llm"} and kept.count() == 2
    assert kept.get(meta__clause="fee").meta["amount"] == "120000·usd/year"
    run = SkillRun.objects.get(skill_name="contract_clauses")
    assert run.trigger == "event:document.uploaded" and run.used_llm
