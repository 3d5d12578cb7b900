"""The campaign report in a real browser: headless Chromium opens it without errors, takes a
screenshot, and the figures it renders (after the page's own script ran) equal report.json's.

Skipped, saying why, when no Chromium is installed (``.ci/chromium.sh`` installs it in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "python:tests.targets.broken_normalize:UnmarkedSynthetic"


def _chromium() -> str | None:
    explicit = os.environ.get("CTXMODEL_CHROMIUM")
    if explicit and Path(explicit).exists():
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (.ci/chromium.sh installs it)")


def _browser(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args,
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class _Figures(HTMLParser):
    """Collects the rendered DOM's figures: ``data-total``, per-property ``data-figure`` cells,
    failure sections, and the attributes the page's script set on ``<html>``."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}
        self.totals: dict[str, str] = {}
        self.props: dict[str, dict[str, str]] = {}
        self.failures: list[str] = []
        self.offending = 0
        self._capture: tuple[str, str] | None = None
        self._row: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag == "tr" and a.get("data-property"):
            self._row = a["data-property"]
            self.props[self._row or ""] = {}
        if "data-total" in a:
            self._capture = ("total", a["data-total"] or "")
        elif "data-figure" in a and self._row is not None and tag == "td":
            self._capture = ("prop", a["data-figure"] or "")
        if tag == "section" and "failure" in (a.get("class") or ""):
            self.failures.append(a.get("data-property") or "")
        if "offending" in (a.get("class") or "").split():
            self.offending += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        if tag in ("dd", "td"):
            self._capture = None

    def handle_data(self, data: str) -> None:
        if self._capture is None or not data.strip():
            return
        kind, key = self._capture
        if kind == "total":
            self.totals[key] = data.strip()
        elif self._row is not None:
            self.props[self._row][key] = data.strip()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    os.chdir(ROOT)
    config = CampaignConfig(
        target_spec=BROKEN,
        max_examples=40,
        workers=1,
        database=str(tmp / "db"),
        fixtures_dir=str(tmp / "fixtures"),
        report_dir=str(tmp / "report"),
        property_ids=("normalize.synthetic-marked", "request.oracle"),
        agent_loop=False,
        seed=5,
    )
    result = run_campaign(config, out=open(os.devnull, "w"), tty=False)
    assert result.failures, "the campaign was meant to find the broken target's bug"
    return tmp / "report"


def test_report_renders_without_errors_and_matches_report_json(report: Path, tmp_path: Path) -> None:
    url = (report / "report.html").resolve().as_uri()
    shot = tmp_path / "report.png"
    done = _browser(tmp_path / "profile-a", f"--screenshot={shot}", "--window-size=1280,2400", url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one

    dumped = _browser(tmp_path / "profile-b", "--dump-dom", url)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    page = _Figures()
    page.feed(dumped.stdout)
    # The page's own script ran to its end and found its drawn totals equal to its embedded data.
    assert page.root.get("data-ready") == "ok", page.root
    assert "data-errors" not in page.root

    data = json.loads((report / "report.json").read_text(encoding="utf-8"))
    totals = data["totals"]
    assert int(page.totals["examples"]) == totals["examples"]
    assert int(page.totals["failures"]) == totals["failures"] == len(data["failures"])
    assert int(page.totals["distinctEvents"]) == totals["distinctEvents"]
    assert int(page.totals["properties"]) == totals["properties"]
    assert float(page.totals["examplesPerSecond"]) == pytest.approx(totals["examplesPerSecond"])
    for prop in data["properties"]:
        shown = page.props[prop["id"]]
        assert int(shown["examples"]) == prop["examples"]
        assert int(shown["distinctEvents"]) == prop["distinctEvents"]
        assert int(shown["failures"]) == prop["failures"]
        assert shown["status"] == prop["status"]
    assert page.failures == [f["property"] for f in data["failures"]]
    # The block the finding names is highlighted in the drawn conversation.
    assert page.offending >= 1
