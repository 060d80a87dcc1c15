"""The pages, one module per area of the site, named after what it shows: queue, signatures, jobs,
search, analytics, reports. access.py says who may do what; display.py and export.py hold what two
areas share (log excerpts, tracebacks and diffs as the templates draw them; CSV downloads).

Every page needs a login; changing anything needs the triage permission (engineers); managers read;
the analytics and reports need the view_reports permission."""
