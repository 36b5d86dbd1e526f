from django import template

from metrics.dashboard import dashboard

register = template.Library()


@register.inclusion_tag("metrics/dashboard.html", takes_context=True)
def metrics_dashboard(context):
    """The dashboard for the admin index (templates/admin/index.html)."""
    return dashboard(context["request"])
