"""The contracts set of bench/quality (bench/quality/contracts.py) at a tiny size: its generator,
its offline scoring and its upload timing still run against the current code and schema."""

import pytest

from bench.quality import contracts


def test_the_generated_contracts_are_scored_offline():
    result = contracts.evaluate(contracts.build(6, seed=7))
    overall = result["clauses"]["all"]
    assert result["contracts"] == 6 and overall["gold"] >= 6 * 7
    assert overall["recall"] >= 0.9 and overall["precision"] >= 0.9, result["misses"]
    assert {"en", "zh"} <= set(result["clauses"])


@pytest.mark.django_db(transaction=True)  # the work after the commit runs, as in production
def test_the_upload_timing_reads_a_pdf_into_clause_memories():
    timing = contracts.time_upload(pages=3)
    assert timing["pages"] == 3 and timing["status"] == "done" and timing["memories"] >= 6
    assert timing["seconds"] > 0
