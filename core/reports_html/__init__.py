"""One self-contained HTML file of a run's results: escaping, charts, the item table's data, the page.

Nothing here computes a statistic: :mod:`dialjudge.core.api.html_report` gathers the figures from the
use cases that compute them (the agreement tables, the leaderboard, the paired comparison, the review
queue) and hands them here to be laid out. The page fetches nothing: styles, script, data and charts
are inline, under a Content Security Policy that lets nothing else in.
"""
