"""Roles as Django groups: engineers triage, managers read everything and see reports, admins
(staff users) manage users, teams and API tokens in the admin."""
from django.contrib.auth.models import Group, Permission

ENGINEERS, MANAGERS = "Engineers", "Managers"
ROLE_PERMISSIONS = {
    ENGINEERS: ["triage.triage_failures", "triage.view_reports"],
    MANAGERS: ["triage.view_reports"],
}


def ensure_roles(**kwargs) -> None:
    """Create the role groups with their permissions (run after every migrate; idempotent)."""
    for name, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        for perm in perms:
            app_label, codename = perm.split(".")
            permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
            if permission:
                group.permissions.add(permission)


def can_triage(user) -> bool:
    return user.is_authenticated and user.has_perm("triage.triage_failures")
