from django import forms

from jobs_ingest.models import CATEGORY_CHOICES
from triage.diffs import MAX_DIFF_BYTES, DiffError, parse_diff
from triage.models import ROOT_CAUSE_CHOICES, AlertSubscription, Team

BLANK = [("", "—")]


class JudgmentForm(forms.Form):
    category = forms.ChoiceField(choices=CATEGORY_CHOICES, help_text="confirm the automatic category or correct it")
    root_cause = forms.ChoiceField(choices=BLANK + ROOT_CAUSE_CHOICES, required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=20_000)
    fix_description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=20_000,
                                      label="Fix")
    fix_diff = forms.CharField(widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
                               required=False, label="Fix diff (unified)", strip=False)
    diff_file = forms.FileField(required=False, label="or upload a .diff/.patch")

    def clean(self):
        data = super().clean()
        upload = data.get("diff_file")
        if upload:
            if upload.size > MAX_DIFF_BYTES:
                raise forms.ValidationError({"diff_file": f"the file is larger than {MAX_DIFF_BYTES // 1024} KB"})
            data["fix_diff"] = upload.read().decode("utf-8", errors="replace")
            # A file input cannot be refilled: if the form comes back, the uploaded text is in the diff field.
            self.data = self.data.copy()
            self.data["fix_diff"] = data["fix_diff"]
        if data.get("fix_diff", "").strip():
            try:
                parse_diff(data["fix_diff"])
            except DiffError as exc:
                self.add_error("fix_diff" if not upload else "diff_file", f"Not a valid unified diff: {exc}")
        else:
            data["fix_diff"] = ""
        return data


class OverrideForm(forms.Form):
    category = forms.ChoiceField(choices=BLANK + CATEGORY_CHOICES, required=False, label="Category for this job only")
    root_cause = forms.ChoiceField(choices=BLANK + ROOT_CAUSE_CHOICES, required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=20_000)


class FixedByForm(forms.Form):
    job = forms.CharField(required=False, max_length=1000, label="Fixed by job",
                          help_text="a suggested job, our job id, its URL, or platform:external_id")
    unlink = forms.BooleanField(required=False)
    confirm = forms.BooleanField(required=False, help_text="link even though the job failed or ended too early")


class IssueLinkForm(forms.Form):
    """A bug/issue URL; http(s) only (a javascript: link would run in the page of whoever clicks it)."""
    issue_url = forms.CharField(required=False, max_length=500, label="Issue URL",
                                widget=forms.URLInput(attrs={"placeholder": "https://github.com/org/repo/issues/123"}))

    def clean_issue_url(self):
        from triage.issue_links import IssueLinkError, check_url
        try:
            return check_url(self.cleaned_data["issue_url"])
        except IssueLinkError as exc:
            raise forms.ValidationError(str(exc)) from exc


class AssignForm(forms.Form):
    owner_user = forms.CharField(required=False, max_length=150, label="Person (username)")
    owner_team = forms.ModelChoiceField(queryset=None, required=False, label="Team")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from triage.models import Team
        self.fields["owner_team"].queryset = Team.objects.order_by("name")

    @classmethod
    def from_request(cls, request) -> "AssignForm":
        """The posted form; its "Assign to me" button names the person posting."""
        data = request.POST.copy()
        if data.get("me"):
            data["owner_user"] = request.user.get_username()
        return cls(data)

    def clean_owner_user(self):
        from django.contrib.auth import get_user_model
        name = self.cleaned_data["owner_user"].strip()
        if not name:
            return None
        user = get_user_model().objects.filter(username=name, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"no active user named {name!r}")
        return user


class CommentForm(forms.Form):
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Comment; @username notifies them"}),
                           max_length=20_000, label="Comment")


class ClusterJudgmentForm(forms.Form):
    """One judgment for every signature of a cluster (a signature judged on its own keeps its own)."""
    category = forms.ChoiceField(choices=CATEGORY_CHOICES)
    root_cause = forms.ChoiceField(choices=BLANK + ROOT_CAUSE_CHOICES, required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=20_000)
    fix_description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=20_000,
                                      label="Fix")


class MergeForm(forms.Form):
    other = forms.CharField(max_length=300, label="Merge this signature into the one on this page",
                            help_text="its id or its page's URL (/signatures/<id>/)")
    note = forms.CharField(max_length=2000, required=False, label="Why (kept with the rule)")

    def clean_other(self):
        from jobs_ingest.models import Signature
        text = self.cleaned_data["other"].strip()
        tail = text.split("/signatures/", 1)[1].strip("/").split("/")[0] if "/signatures/" in text else text
        signature = Signature.objects.filter(pk=int(tail)).first() if tail.isdigit() else None
        if signature is None:
            raise forms.ValidationError("no such signature: give its id or its page's URL")
        return signature


class SplitForm(forms.Form):
    contains = forms.CharField(max_length=500, strip=False, label="Split off the failures whose line or message contains")
    note = forms.CharField(max_length=2000, required=False, label="Why (kept with the rule)")


class AlertSubscriptionForm(forms.ModelForm):
    """Subscribe yourself, or a team you belong to, to one kind of alert. Teams are limited to the user's
    own (all for admins), and only admins may give a webhook URL, since the worker will call it."""
    for_team = forms.BooleanField(required=False, label="The team subscribes (email its members), not just me")
    webhook_url = forms.URLField(required=False, max_length=500, assume_scheme="https",
                                 label="Webhook URL (JSON POST, Slack-compatible)")

    class Meta:
        model = AlertSubscription
        fields = ["kind", "team", "for_team", "min_gpu_hours", "spike_factor", "email", "webhook_url"]
        labels = {"team": "Only this team's failures", "min_gpu_hours": "New signature: from GPU hours",
                  "spike_factor": "Spike: from x the weekly rate", "email": "Send email"}

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["team"].queryset = Team.objects.all() if user.is_staff else user.teams.all()
        self.fields["team"].required = False
        if not user.is_staff:
            del self.fields["webhook_url"]

    def clean(self):
        data = super().clean()
        if data.get("for_team") and not data.get("team"):
            self.add_error("team", "Choose the team that subscribes.")
        if data.get("min_gpu_hours") is not None and data["min_gpu_hours"] < 0:
            self.add_error("min_gpu_hours", "Must be 0 or more.")
        if data.get("spike_factor") is not None and data["spike_factor"] < 1:
            self.add_error("spike_factor", "A spike is at least 1x the weekly rate.")
        url = data.get("webhook_url") or ""
        if url and not url.lower().startswith(("https://", "http://")):
            self.add_error("webhook_url", "Only http(s) URLs.")
        if not data.get("email") and not url:
            self.add_error("email", "Choose email, a webhook, or both.")
        return data

    def save(self, commit=True):
        sub = super().save(commit=False)
        sub.user = None if self.cleaned_data.get("for_team") else self.user
        sub.created_by = self.user
        if commit:
            sub.save()
        return sub
