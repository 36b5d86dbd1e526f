"""BM25 keyword ranking on PostgreSQL, shared by memories and wiki sections.

Each indexed row stores its segmented `tokens` (space-joined), a generated tsvector of
those exact tokens (GIN, for candidate lookup), its term frequencies `tf` (jsonb) and
its length `doc_len`. Per-tenant document frequencies live in `TermStat`/`CorpusStat`,
kept current by the services that write rows. Scoring happens in SQL over the
candidates that match at least one query term, inside the caller's visible set.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from django.db import connection, models
from django.db.models import F, Func, Value
from django.db.models.expressions import RawSQL

from almanac.models import CorpusStat, TermStat
from almanac.search import segment

K1 = 1.2
B = 0.75
MAX_QUERY_TERMS = 32
COMMON_TERM_SHARE = 0.05


def tsvector_expression():
    """The generated-column expression: a tsvector of exactly the stored tokens."""
    from django.contrib.postgres.search import SearchVectorField

    return Func(
        Func(F("tokens"), Value(" "), function="string_to_array"),
        function="array_to_tsvector",
        output_field=SearchVectorField(),
    )


def index_fields(text: str) -> dict:
    """Field values for a row whose keyword text is `text`."""
    tokens = [t[:200] for t in segment(text)]
    return {"tokens": " ".join(tokens), "tf": dict(Counter(tokens)), "doc_len": len(tokens)}


def stats_apply(*, tenant_id: int, corpus: str, old: dict | None, new: dict | None) -> None:
    """Move the corpus statistics from a row's old term frequencies to its new ones.

    Terms are updated in sorted order so concurrent writers never deadlock.
    """
    old_terms = set((old or {}).get("tf", {}))
    new_terms = set((new or {}).get("tf", {}))
    delta = {t: 1 for t in new_terms - old_terms} | {t: -1 for t in old_terms - new_terms}
    docs = (1 if new is not None else 0) - (1 if old is not None else 0)
    length = (new or {}).get("doc_len", 0) - (old or {}).get("doc_len", 0)
    with connection.cursor() as cursor:
        if delta:
            terms = sorted(delta)
            cursor.execute(
                f"""INSERT INTO {TermStat._meta.db_table} (tenant_id, corpus, term, df)
                    SELECT %s, %s, t, d FROM unnest(%s::text[], %s::int[]) AS u(t, d)
                    ON CONFLICT (tenant_id, corpus, term) DO UPDATE SET df = GREATEST(0, {TermStat._meta.db_table}.df + EXCLUDED.df)""",
                [tenant_id, corpus, terms, [delta[t] for t in terms]],
            )
        if docs or length:
            cursor.execute(
                f"""INSERT INTO {CorpusStat._meta.db_table} (tenant_id, corpus, docs, total_len)
                    VALUES (%s, %s, %s, %s)
                    ON CONFLICT (tenant_id, corpus) DO UPDATE SET
                      docs = GREATEST(0, {CorpusStat._meta.db_table}.docs + EXCLUDED.docs),
                      total_len = GREATEST(0, {CorpusStat._meta.db_table}.total_len + EXCLUDED.total_len)""",
                [tenant_id, corpus, docs, length],
            )


def stats_rebuild(*, tenant_id: int, corpus: str, queryset) -> None:
    """Recompute a corpus's statistics from its rows (repair tool; the services keep them current)."""
    TermStat.objects.filter(tenant_id=tenant_id, corpus=corpus).delete()
    CorpusStat.objects.filter(tenant_id=tenant_id, corpus=corpus).delete()
    df: Counter = Counter()
    docs = total = 0
    for tf, doc_len in queryset.values_list("tf", "doc_len").iterator():
        df.update(tf.keys())
        docs += 1
        total += doc_len
    TermStat.objects.bulk_create(
        [TermStat(tenant_id=tenant_id, corpus=corpus, term=t, df=n) for t, n in df.items()], batch_size=2000
    )
    CorpusStat.objects.create(tenant_id=tenant_id, corpus=corpus, docs=docs, total_len=total)


@dataclass
class KeywordQuery:
    terms: list[str]
    idf: dict[str, float]
    avg_len: float

    @property
    def empty(self) -> bool:
        return not self.terms

    def tsquery(self) -> str:
        quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in self.terms]
        return " | ".join(quoted)

    def match(self, table_alias: str = "") -> RawSQL:
        col = f"{table_alias}.search_vector" if table_alias else "search_vector"
        return RawSQL(f"{col} @@ %s::tsquery", [self.tsquery()], output_field=models.BooleanField())

    def finder(self, common_share: float = COMMON_TERM_SHARE) -> KeywordQuery:
        """The query restricted to the terms used to *find* candidates (all terms still score).

        Terms in more than `common_share` of the corpus ("meeting", "客户") would pull in
        a large part of the tenant only to score it near zero; like a common-terms query
        they only score. If every term is common, the two rarest find candidates.
        """
        # idf = log(1 + (N - df + 0.5) / (df + 0.5)) ≈ log(1 / share) for a term in `share` of N docs.
        threshold = math.log(1 / common_share)
        rare = [t for t in self.terms if self.idf[t] >= threshold]
        terms = rare or sorted(self.terms, key=lambda t: -self.idf[t])[:2]
        return KeywordQuery(terms, self.idf, self.avg_len)

    def score(self) -> RawSQL:
        """BM25 of the row against the query, as an SQL expression."""
        parts, params = [], []
        for term in self.terms:
            parts.append(
                "%s * (COALESCE((tf->>%s)::float, 0) * %s) / "
                "(COALESCE((tf->>%s)::float, 0) + %s * (1 - %s + %s * doc_len / %s))"
            )
            params += [self.idf[term], term, K1 + 1, term, K1, B, B, max(self.avg_len, 1.0)]
        return RawSQL("(" + " + ".join(parts) + ")", params, output_field=models.FloatField())


def keyword_query(*, tenant_id: int, corpus: str, text: str) -> KeywordQuery:
    """Segment the query and look up the IDF of its terms (one round-trip)."""
    terms = list(dict.fromkeys(t[:200] for t in segment(text)))[:MAX_QUERY_TERMS]
    if not terms:
        return KeywordQuery([], {}, 1.0)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT c.docs, c.total_len, t.term, t.df
                FROM {CorpusStat._meta.db_table} c
                LEFT JOIN {TermStat._meta.db_table} t
                  ON t.tenant_id = c.tenant_id AND t.corpus = c.corpus AND t.term = ANY(%s)
                WHERE c.tenant_id = %s AND c.corpus = %s""",
            [terms, tenant_id, corpus],
        )
        rows = cursor.fetchall()
    docs = rows[0][0] if rows else 0
    avg_len = (rows[0][1] / docs) if rows and docs else 1.0
    df = {term: n for _, _, term, n in rows if term}
    terms = [t for t in terms if df.get(t, 0) > 0]
    idf = {t: math.log(1 + (docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    return KeywordQuery(terms, idf, avg_len)
