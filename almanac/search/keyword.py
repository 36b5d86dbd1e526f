"""BM25 keyword ranking on PostgreSQL, shared by memories and wiki sections.

Each indexed row stores its segmented `tokens` (space-joined), a generated tsvector of
those exact tokens (GIN, for candidate lookup), its term frequencies `tf` (jsonb) and
its length `doc_len`. Per-tenant document frequencies live in `TermStat`/`CorpusStat`,
kept current by the services that write rows. Scoring happens in SQL over the
candidates that match at least one query term, inside the caller's visible set.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, connections, models
from django.db.models import F, Func, Value
from django.db.models.expressions import RawSQL

from almanac.models import CorpusStat, TermStat
from almanac.search.text import segment
from almanac.selectors import text_array, where_sql

K1 = 1.2
B = 0.75
MAX_QUERY_TERMS = 32
COMMON_TERM_SHARE = 0.05
# A finder expected to match more rows than this is narrowed to pairs of terms.
MAX_PAIRED_TERMS = 6


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
            _drop_unused_terms(
                cursor, tenant_id=tenant_id, corpus=corpus, terms=[t for t in terms if delta[t] < 0]
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


class StatsBuffer:
    """The keyword statistics of a batch of writes, summed and written at `flush`: one
    statement for the terms and one for the corpus size per tenant and corpus, instead of
    two per row. Same `stats_apply` signature as this module."""

    def __init__(self) -> None:
        self.df: dict[tuple[int, str], Counter] = defaultdict(Counter)
        self.size: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])

    def stats_apply(self, *, tenant_id: int, corpus: str, old: dict | None, new: dict | None) -> None:
        old_terms, new_terms = set((old or {}).get("tf", {})), set((new or {}).get("tf", {}))
        df = self.df[(tenant_id, corpus)]
        df.update(new_terms - old_terms)
        df.subtract(old_terms - new_terms)
        size = self.size[(tenant_id, corpus)]
        size[0] += (new is not None) - (old is not None)
        size[1] += (new or {}).get("doc_len", 0) - (old or {}).get("doc_len", 0)

    def flush(self) -> None:
        terms_table, corpus_table = TermStat._meta.db_table, CorpusStat._meta.db_table
        with connection.cursor() as cursor:
            for (tenant_id, corpus), df in sorted(self.df.items()):
                terms = sorted(t for t, n in df.items() if n)  # sorted: concurrent writers never deadlock
                if not terms:
                    continue
                cursor.execute(
                    f"""INSERT INTO {terms_table} (tenant_id, corpus, term, df)
                        SELECT %s, %s, t, d FROM unnest(%s::text[], %s::int[]) AS u(t, d)
                        ON CONFLICT (tenant_id, corpus, term)
                        DO UPDATE SET df = GREATEST(0, {terms_table}.df + EXCLUDED.df)""",
                    [tenant_id, corpus, terms, [df[t] for t in terms]],
                )
                gone = [t for t in terms if df[t] < 0]
                if gone:  # terms no document holds any more go (as keyword.stats_apply does)
                    cursor.execute(
                        f"DELETE FROM {terms_table} WHERE tenant_id = %s AND corpus = %s "
                        "AND term = ANY(%s::text[]) AND df <= 0",
                        [tenant_id, corpus, gone],
                    )
            for (tenant_id, corpus), (docs, length) in sorted(self.size.items()):
                if docs or length:
                    cursor.execute(
                        f"""INSERT INTO {corpus_table} (tenant_id, corpus, docs, total_len)
                            VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, corpus) DO UPDATE SET
                              docs = GREATEST(0, {corpus_table}.docs + EXCLUDED.docs),
                              total_len = GREATEST(0, {corpus_table}.total_len + EXCLUDED.total_len)""",
                        [tenant_id, corpus, docs, length],
                    )
        self.df.clear()
        self.size.clear()


def _drop_unused_terms(cursor, *, tenant_id: int, corpus: str, terms: list[str]) -> None:
    """Terms no document holds any more go: a purged passport number must not stay behind
    as a row of the statistics (a df of 0 scores nothing either)."""
    if terms:
        cursor.execute(
            f"""DELETE FROM {TermStat._meta.db_table}
                WHERE tenant_id = %s AND corpus = %s AND term = ANY(%s::text[]) AND df <= 0""",
            [tenant_id, corpus, sorted(terms)],
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
    docs: int | None = None  # rows in the corpus (None: no statistics yet)
    df: dict[str, int] = field(default_factory=dict)
    # How candidates are found: any clause matches, a clause needs all of its terms.
    # None: one clause per term (plain OR).
    clauses: list[tuple[str, ...]] | None = None
    # The query's terms that no document holds, each weighed as the rarest term could be:
    # a query of words nobody wrote is covered by nothing.
    unknown_idf: float = 0.0

    def coverage(self, matched) -> float:
        """Share of the query's weight (IDF) in the `matched` terms: 1.0 when a row holds
        every term of the query, near 0 when it holds only its commonest word."""
        total = sum(self.idf.values()) + self.unknown_idf
        return sum(self.idf.get(t, 0.0) for t in set(matched)) / total if total else 0.0

    @property
    def empty(self) -> bool:
        return not self.terms

    def tsquery(self) -> str:
        def quoted(term: str) -> str:
            return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"

        clauses = self.clauses if self.clauses is not None else [(t,) for t in self.terms]
        return " | ".join("(" + " & ".join(quoted(t) for t in clause) + ")" for clause in clauses)

    def match(self, table_alias: str = "") -> RawSQL:
        return RawSQL(*self.match_sql(table_alias), output_field=models.BooleanField())

    def match_sql(self, table_alias: str = "") -> tuple[str, list]:
        col = f"{table_alias}.search_vector" if table_alias else "search_vector"
        return f"{col} @@ %s::tsquery", [self.tsquery()]

    def finder(self, common_share: float = COMMON_TERM_SHARE, few: int = 0) -> KeywordQuery:
        """The query restricted to the terms used to *find* candidates (all terms still score).

        Terms in more than `common_share` of the corpus ("meeting", "客户") would pull in
        a large part of the tenant only to score it near zero; like a common-terms query
        they only score. A term in at most `few` rows finds whatever its share (a caller
        that must see every row holding a term: in a small tenant 5% is a dozen rows). If
        every term is common, the two rarest find candidates.
        """
        # idf = log(1 + (N - df + 0.5) / (df + 0.5)) ≈ log(1 / share) for a term in `share` of N docs.
        threshold = math.log(1 / common_share)
        rare = [t for t in self.terms if self.idf[t] >= threshold or self.df.get(t, 0) <= few]
        terms = rare or sorted(self.terms, key=lambda t: -self.idf[t])[:2]
        return KeywordQuery(terms, self.idf, self.avg_len, self.docs, self.df, unknown_idf=self.unknown_idf)

    def narrowed(self, budget: int) -> KeywordQuery | None:
        """A stricter finder when this one would match more than `budget` rows, else None.

        Scoring is per candidate row, so a finder of a few mid-frequency terms ("Apollo
        decided …": 13% of the corpus) costs tens of milliseconds. Terms rare enough
        (df <= budget / 4) still find alone; the others only in pairs: a document with two
        of the query's terms is where the BM25 top lies. Like any top-k pruning this can
        miss a document that only one mid-frequency term would have found.
        """
        if len(self.terms) < 2 or sum(self.df.get(t, 0) for t in self.terms) <= budget:
            return None
        ranked = sorted(self.terms, key=lambda t: self.df.get(t, 0))[:MAX_PAIRED_TERMS]
        alone = [t for t in ranked if self.df.get(t, 0) <= budget // 4]
        paired = [t for t in ranked if t not in alone]
        clauses = [(t,) for t in alone] + [(a, b) for i, a in enumerate(paired) for b in paired[i + 1 :]]
        if not clauses:
            return None
        return KeywordQuery(self.terms, self.idf, self.avg_len, self.docs, self.df, clauses, self.unknown_idf)

    def score(self) -> RawSQL:
        return RawSQL(*self.score_sql(), output_field=models.FloatField())

    def score_sql(self) -> tuple[str, list]:
        """BM25 of the row against the query, as an SQL expression.

        Per term: idf·(k1+1)·tf / (tf + k1·(1-b) + k1·b·doc_len/avg_len), written as
        idf·(k1+1) / (1 + (k1·(1-b) + k1·b·doc_len/avg_len) / tf) so that each term reads
        `tf` once (stored counts are ≥ 1), with the constants folded here and typed float8.
        Plain literals would be `numeric`, and PostgreSQL would do the per-row arithmetic in
        software decimals: that was ~45% of a keyword lane's time (measured: 18.1 vs
        10.4 ms over 1,500 candidates and 10 terms).
        """
        parts, params = [], []
        base = K1 * (1 - B)
        per_len = K1 * B / max(self.avg_len, 1.0)
        for term in self.terms:
            # tf missing (NULL) → the whole term is NULL → 0.
            parts.append(
                "COALESCE(%s::float8 / (1 + (%s::float8 + %s::float8 * doc_len) / (tf->>%s)::float8), 0)"
            )
            params += [self.idf[term] * (K1 + 1), base, per_len, term]
        return "(" + " + ".join(parts) + ")", params


def top(
    queryset,
    query: KeywordQuery,
    *,
    size: int,
    common_share: float = COMMON_TERM_SHARE,
    budget: int | None = None,
    extra: tuple[str, ...] = (),
    matched_terms: bool = False,
    few: int = 0,
) -> list[tuple]:
    """(id, BM25, *extra columns[, the query terms the row holds]) of the `size` best rows
    of `queryset` (already access-filtered), best first. `few`: a term in at most this many
    rows finds candidates however common it is (`KeywordQuery.finder`).

    Candidates come from the finder (rare terms), narrowed to pairs of terms when it would
    match more than `budget` rows; if the narrow finder leaves the lane nearly empty, the
    plain finder runs instead. Every query term scores every candidate.
    """
    if query.empty:
        return []
    visible = where_sql(queryset)
    if visible is None:
        return []
    budget = settings.KEYWORD_CANDIDATE_BUDGET if budget is None else budget
    finder = query.finder(common_share, few=few)
    db = connections[queryset.db]
    table = db.ops.quote_name(queryset.model._meta.db_table)
    score, score_params = query.score_sql()
    columns = "".join(f", {table}.{db.ops.quote_name(c)}" for c in extra)
    if matched_terms:
        columns += f", {table}.tf"

    def run(candidates: KeywordQuery) -> list[tuple]:
        match, match_params = candidates.match_sql()
        sql = (
            f"SELECT {table}.id, {score} AS kw{columns} FROM {table} WHERE ({visible[0]}) AND {match} "
            f"ORDER BY kw DESC, {table}.id LIMIT %s"
        )
        params = [*score_params, *visible[1], *match_params, size]
        if matched_terms:
            # The query terms each row holds (for `KeywordQuery.coverage`), read for the
            # `size` rows kept, not for every candidate the sort saw.
            keep = ", ".join(f"r.{db.ops.quote_name(c)}" for c in ("id", "kw", *extra))
            sql = (
                f"SELECT {keep}, ARRAY(SELECT k FROM jsonb_object_keys(r.tf) k WHERE k = ANY(%s::text[])) "
                f"FROM ({sql}) r ORDER BY r.kw DESC, r.id"
            )
            params = [text_array(query.terms), *params]
        with db.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    narrow = finder.narrowed(budget)
    if narrow is not None:
        rows = run(narrow)
        if len(rows) >= max(1, size // 5):
            return rows
    return run(finder)


def keyword_query(*, tenant_id: int, corpus: str, text: str) -> KeywordQuery:
    """Segment the query and look up the corpus size and the IDF of its terms (one round-trip)."""
    terms = list(dict.fromkeys(t[:200] for t in segment(text)))[:MAX_QUERY_TERMS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT c.docs, c.total_len, t.term, t.df
                FROM {CorpusStat._meta.db_table} c
                LEFT JOIN {TermStat._meta.db_table} t
                  ON t.tenant_id = c.tenant_id AND t.corpus = c.corpus AND t.term = ANY(%s::text[])
                WHERE c.tenant_id = %s AND c.corpus = %s""",
            [text_array(terms), tenant_id, corpus],
        )
        rows = cursor.fetchall()
    if not rows:
        return KeywordQuery([], {}, 1.0, None)
    docs = rows[0][0]
    avg_len = (rows[0][1] / docs) if docs else 1.0
    df = {term: n for _, _, term, n in rows if term}
    unknown = sum(1 for t in terms if df.get(t, 0) <= 0)
    terms = [t for t in terms if df.get(t, 0) > 0]
    idf = {t: math.log(1 + (docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    return KeywordQuery(
        terms,
        idf,
        avg_len,
        docs,
        {t: df[t] for t in terms},
        unknown_idf=unknown * math.log(1 + (docs + 0.5) / 0.5),
    )
