"""A person's role as their e-mail signature states it, in English and Chinese; nothing when
the line after the name is no role."""

import pytest

from almanac.text.signature import signature_role


@pytest.mark.parametrize(
    ("text", "name", "role"),
    [
        ("Thanks!\n\nBest,\nLena Berg\nHead of Procurement", "Lena Berg", "Head of Procurement"),
        ("See you then.\n-- \nLena Berg | VP Engineering, Globex", "Lena Berg", "VP Engineering, Globex"),
        ("好的，周五见。\n\n王芳，采购经理", "王芳", "采购经理"),
        ("Regards,\nLena Berg\n\n  Director of IT  ", "Lena Berg", "Director of IT"),
    ],
)
def test_the_role_beside_or_below_the_name(text, name, role):
    assert signature_role(text, name) == role


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Lena Berg will join the call on Friday.", "Lena Berg"),  # the name begins a sentence
        ("Best,\nLena Berg\nlena@globex.com", "Lena Berg"),  # an address
        ("Best,\nLena Berg\n+1 415 555 0100", "Lena Berg"),  # a phone number
        ("Best,\nLena Berg\nLet me know what you think.", "Lena Berg"),  # a sentence
        ("Best,\nLena Berg\nHead of Procurement", "lena@globex.com"),  # no name known
        ("Best,\nLena", "Lena Berg"),
    ],
)
def test_no_role_where_none_is_stated(text, name):
    assert signature_role(text, name) == ""
