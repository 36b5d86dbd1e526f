"""Field labels, help texts and choice labels of our apps' models in the reader's language, in the admin.

Most fields take their label from their name (`created_at` → "created at"), and their help
texts are plain strings: declaring each one with `gettext_lazy` would add a migration per
field in every app for no change of schema. Instead the admin, once every model is loaded,
makes each plain label and help text lazy, so Django's forms, lists and filters look it up
in the catalogue (`locale/`) for the request's language. Only the displayed attributes
change: a field's deconstruction (what migrations compare) reads its declared name, and a
lazy help text equals the plain one. `field_label_msgids` lists what the catalogue must
translate (tests/test_translations.py).
"""

from __future__ import annotations

from django.apps import apps
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

OUR_APPS = ("almanac", "skills", "connectors", "wiki", "memories", "documents", "context", "web", "metrics",
            "governance")  # fmt: skip


def _our_fields():
    for model in apps.get_models():
        if model._meta.app_label in OUR_APPS:
            yield from model._meta.get_fields(include_hidden=False)


def _plain(value) -> bool:
    return isinstance(value, str) and bool(value.strip()) and not isinstance(value, Promise)


def _choice_labels(field) -> list[str]:
    choices = getattr(field, "_almanac_choices", None) or getattr(field, "choices", None) or []
    return [label for _value, label in choices if _plain(label)]


def field_label_msgids() -> set[str]:
    """The labels, help texts and choice labels of our models' fields as written (the text
    a lazy one made by `field_labels_translate` stands for)."""
    msgids = set()
    for field in _our_fields():
        for attr in ("verbose_name", "help_text"):
            value = getattr(field, f"_almanac_{attr}", None) or getattr(field, attr, None)
            if _plain(value):
                msgids.add(value)
        msgids.update(_choice_labels(field))
    return msgids


def field_labels_translate() -> None:
    """Make every plain label and help text of our models' fields lazy (see the module)."""
    for field in _our_fields():
        if not hasattr(field, "verbose_name"):  # a reverse relation: labelled by its model
            continue
        for attr in ("verbose_name", "help_text"):
            value = getattr(field, attr, None)
            if _plain(value):
                setattr(field, f"_almanac_{attr}", value)
                setattr(field, attr, gettext_lazy(value))
        choices = getattr(field, "choices", None)
        # Flat choices only (ours are TextChoices): a lazy label equals the plain one.
        if choices and all(isinstance(label, str) for _value, label in choices):
            field._almanac_choices = list(choices)
            field.choices = [
                (value, gettext_lazy(label) if _plain(label) else label) for value, label in choices
            ]
