"""Proof reports: Markdown, HTML and JSON renderings of verdicts (`render`)."""
