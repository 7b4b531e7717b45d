"""report.pdf: the HTML report printed by headless Chromium (its print CSS), when Chromium is installed."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MISSING = ("no Chromium found (looked for chromium, chromium-browser, google-chrome on PATH); install it "
           "(Debian/Ubuntu: apt-get install chromium) or open report.html in a browser and print it")
TIMEOUT = 180


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def printable(html: str) -> str:
    """The page as printed: what the HTML folds for a reader (versions, options, what each proof
    rested on, the rlimits) open, so that the printed copy is reproducible; what is folded because
    it is long (`<details class='fold'>`: the further refutations of a property, a form of
    thousands of characters) stays folded, its summary saying what and how many."""
    return html.replace("<details>", "<details open>")


def print_pdf(page: Path, out: Path) -> str | None:
    """Print `page` (an HTML file) to `out`; None on success, else why not (one line)."""
    exe = browser()
    if exe is None:
        return MISSING
    with tempfile.TemporaryDirectory() as profile:
        copy = Path(profile) / "print.html"
        copy.write_text(printable(page.read_text()))
        page = copy
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
               "--no-pdf-header-footer", f"--print-to-pdf={out}", page.resolve().as_uri()]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"Chromium did not print within {TIMEOUT} s"
    if not out.exists() or out.stat().st_size == 0:
        tail = (run.stderr.strip().splitlines() or ["no message"])[-1]
        return f"Chromium printed nothing (exit {run.returncode}: {tail[:200]})"
    return None
