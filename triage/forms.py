from django import forms

from jobs_ingest.models import CATEGORY_CHOICES
from triage.diffs import MAX_DIFF_BYTES, DiffError, parse_diff
from triage.models import ROOT_CAUSE_CHOICES

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
