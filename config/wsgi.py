import logging
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Load the segmenter, tokenizer and offline encoder before the first request, not during it.
try:
    from almanac.search import warm_up

    warm_up()
except Exception:  # the first request that needs them reports the error itself
    logging.getLogger("almanac").exception("warm-up failed")
