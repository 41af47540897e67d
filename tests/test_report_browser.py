"""The report in a real browser: Debian's headless Chromium driven by Selenium.

Renders the report of two runs from disk with the network cut off, checks the console has no
errors, the interactive tables came up, a click on a header sorts its column, and saves a
screenshot to ``reports/ci-artifacts/report-two-runs.png`` (gitignored; CI keeps it as an
artifact). Skips, saying why, only where no Chromium or chromedriver is installed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ALPHA, BETA, REPO, write_run

ARTIFACTS = REPO / "reports" / "ci-artifacts"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
DRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None,
        reason="no Chromium + chromedriver (Debian: apt-get install chromium chromium-driver)",
    ),
]


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,2400", "--allow-file-access-from-files"):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    # No network at all: any fetch the page tried would fail and log an error.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
    )
    yield driver
    driver.quit()


def _wait_ready(driver, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.documentElement.dataset.tables") == "ready"
    )


def _wait_header(driver, header, cls: str, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until the clicked header carries ``cls`` (DataTables' mark of its sort direction)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: cls in (header.get_attribute("class") or "").split())


def _column(driver, table_id: str, col: int) -> list[str]:  # type: ignore[no-untyped-def]
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll(`#${arguments[0]} tbody tr`)]"
            ".map(r => r.cells[arguments[1]] ? r.cells[arguments[1]].textContent.trim() : '')",
            table_id,
            col,
        )
    )


def test_report_of_two_runs_in_headless_chromium(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    from pipeline.analyze import analyze_runs

    alpha = write_run(tmp_path / "alpha", ALPHA)
    beta = write_run(tmp_path / "beta", BETA, chunk_size=2)
    res = analyze_runs([alpha, beta], tmp_path / "report", top=3, top_words=5)
    browser.get_log("browser")  # drop anything logged before this page
    browser.get(res.report.resolve().as_uri())
    _wait_ready(browser)
    # Every table marked sortable became a DataTable.
    n_dt = browser.execute_script("return document.querySelectorAll('table.dt').length")
    n_ready = browser.execute_script("return document.querySelectorAll('table.dataTable').length")
    assert n_dt > 0 and n_ready == n_dt
    # The zoomable score plot (plotly, embedded) drew its lines.
    assert (
        browser.execute_script(
            "return document.querySelectorAll('#plotly-score-cdf .scatterlayer .trace').length"
        )
        == 3
    )
    # Sort the face-effects table by its first run's raw effect: a click on the header.
    header = browser.find_element(By.CSS_SELECTOR, "#face-effects thead th:nth-child(3)")
    browser.execute_script("arguments[0].scrollIntoView()", header)
    before = [float(x) for x in _column(browser, "face-effects", 2) if x]
    # DataTables 2 sorts in a timeout after the click, so wait for the header to say so.
    header.click()
    _wait_header(browser, header, "dt-ordering-asc")
    first = [float(x) for x in _column(browser, "face-effects", 2) if x]
    header.click()
    _wait_header(browser, header, "dt-ordering-desc")
    second = [float(x) for x in _column(browser, "face-effects", 2) if x]
    assert first == sorted(before) and second == sorted(before, reverse=True)
    assert first != second
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    shot = ARTIFACTS / "report-two-runs.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
