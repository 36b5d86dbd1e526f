"""Staff users for the admin's tests: one helper for every suite that needs them."""

from django.contrib.auth.models import Permission
from django.db.models import Q


def make_staff(user, *perms: str):
    """`user` made staff with these model permissions (`perms` as "app_label.codename")."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    query = Q()
    for perm in perms:
        app_label, codename = perm.split(".")
        query |= Q(content_type__app_label=app_label, codename=codename)
    user.user_permissions.add(*Permission.objects.filter(query))
    return user
