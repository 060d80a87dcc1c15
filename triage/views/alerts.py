"""Alert subscriptions (yours and your teams') and, for admins, the delivery log."""
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from triage.forms import AlertSubscriptionForm
from triage.models import AlertDelivery, AlertSubscription


def visible_subscriptions(user):
    if user.is_staff:
        return AlertSubscription.objects.all()
    return AlertSubscription.objects.filter(Q(user=user) | Q(user__isnull=True, team__in=user.teams.all()))


@login_required
def alerts_page(request):
    form = AlertSubscriptionForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("alerts")
    subs = visible_subscriptions(request.user).select_related("user", "team").order_by("kind", "pk")
    return render(request, "triage/alerts.html", {"form": form, "subscriptions": subs},
                  status=400 if form.errors else 200)


@login_required
@require_POST
def delete_subscription(request, subscription_id: int):
    sub = get_object_or_404(visible_subscriptions(request.user), pk=subscription_id)
    sub.delete()
    return redirect("alerts")


@login_required
def delivery_log(request):
    if not request.user.is_staff:
        raise PermissionDenied("The delivery log is for admins.")
    deliveries = AlertDelivery.objects.select_related("subscription__user", "subscription__team")[:200]
    return render(request, "triage/alert_deliveries.html", {"deliveries": deliveries})
