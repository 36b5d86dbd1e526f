"""Users are per tenant: `UserProfile.username` is the name in the tenant, unique there.

Existing users keep their names: a handle (`auth.User.username`) made before this has no
tenant prefix, so it is copied as it is; their logins and personal keys do not change.
"""

from django.db import migrations, models


def fill_username(apps, schema_editor):
    UserProfile = apps.get_model("almanac", "UserProfile")
    profiles = list(UserProfile.objects.select_related("user").only("pk", "user__username"))
    for profile in profiles:
        profile.username = profile.user.username.rpartition(":")[2]
    UserProfile.objects.bulk_update(profiles, ["username"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("almanac", "0006_audit_chain"),
    ]

    operations = [
        migrations.AddField(
            model_name="userprofile",
            name="username",
            field=models.CharField(
                default="",
                help_text="the name in the tenant (unique there)",
                max_length=150,
                verbose_name="name in tenant",
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill_username, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="userprofile",
            constraint=models.UniqueConstraint(
                fields=("tenant", "username"), name="almanac_userprofile_unique_username"
            ),
        ),
    ]
