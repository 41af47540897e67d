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
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,2400",
        "--allow-file-access-from-files",
    ):
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


def _estimate(cell: str) -> float:
    """The estimate of a cell ``"3.3 ± 8.0"`` (or a plain number)."""
    return float(cell.split("±")[0].replace(",", ""))


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
    before = [_estimate(x) for x in _column(browser, "face-effects", 2) if x]
    # DataTables 2 sorts in a timeout after the click, so wait for the header to say so.
    header.click()
    _wait_header(browser, header, "dt-ordering-asc")
    first = [_estimate(x) for x in _column(browser, "face-effects", 2) if x]
    header.click()
    _wait_header(browser, header, "dt-ordering-desc")
    second = [_estimate(x) for x in _column(browser, "face-effects", 2) if x]
    assert first == sorted(before) and second == sorted(before, reverse=True)
    assert first != second
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    shot = ARTIFACTS / "report-two-runs.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors


@pytest.fixture(scope="module")
def designer_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """New dice, classic dice, and the new dice's boards with every point doubled (the same
    boards, a pure scaling): real runs, with dice rebuilt and Tanglet bands, three runs wide."""
    from pipeline.runner import run_from_file
    from tests.conftest import ENABLE2K

    base = tmp_path_factory.mktemp("browser-runs")
    doubled = {"3": 2, "4": 2, "5": 4, "6": 6, "7": 10, "8": 22}
    out = []
    for name, dice, extra in (
        ("new", "new", {}),
        ("classic", "classic", {}),
        ("new-doubled", "new", {"rules.scores": doubled}),
    ):
        run_dir = base / name
        run_from_file(
            REPO / "configs" / "smoke.toml",
            {
                "run.out": str(run_dir),
                "run.n_jobs": 1,
                "lexicon.path": ENABLE2K,
                "boards.dice": dice,
                "boards.count": 800,
                "boards.chunk_size": 400,
                "boards.seed": 5,
                **extra,
            },
        )
        out.append(run_dir)
    return out


# Every visible table wider than the content box of <main>, and the page's own overflow.
OVERFLOW_JS = """
const main = document.querySelector("main");
const cs = getComputedStyle(main);
const width = main.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
const wide = [...document.querySelectorAll("table")]
  .filter((t) => t.offsetParent !== null && t.scrollWidth > width + 1)
  .map((t) => `${t.id || t.closest("section").id}: ${t.scrollWidth} > ${width}`);
if (document.documentElement.scrollWidth > window.innerWidth) wide.push("the page scrolls sideways");
return wide;
"""


def test_first_screen_and_table_widths_at_1280(browser, designer_runs: list[Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """At 1280x800 the headline block is on the first screen, no table is wider than the page,
    every face is on the face table's one page, and the first screen, the bad-board section and
    the pool section are saved as screenshots for a person to look at."""
    from pipeline.analyze import analyze_runs

    res = analyze_runs(designer_runs, tmp_path / "report", top=3, top_words=10)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        browser.get_log("browser")
        browser.get(res.report.resolve().as_uri())
        _wait_ready(browser)
        assert browser.execute_script("return [window.innerWidth, window.innerHeight]") == [1280, 800]
        box = browser.execute_script(
            "const r = document.getElementById('headline').getBoundingClientRect(); return [r.top, r.bottom]"
        )
        assert box[0] >= 0 and box[1] <= 800, box
        text = browser.execute_script("return document.getElementById('headline').innerText")
        assert "points a board" in text and "model estimate" in text and "boggle what-if" in text
        # the headline's mean equals the summary table's
        mean = res.tables.headline["score_mean"].iloc[0]
        assert f"{mean:,.1f}" in text
        assert browser.execute_script(OVERFLOW_JS) == []
        # every face on the face table's one page (the worst faces are the last rows)
        faces = res.tables.face_effects["face"].nunique()
        shown = browser.execute_script("return document.querySelectorAll('#face-effects tbody tr').length")
        assert shown == faces
        paging = (
            "return document.querySelector('#face-effects').closest('.dt-container')"
            ".querySelector('.dt-paging')"
        )
        assert browser.execute_script(paging) is None
        # intervals stay on one line: a "±" cell is one line high
        heights = browser.execute_script(
            "return [...document.querySelectorAll('#face-effects span.ci')].slice(0, 5)"
            ".map(s => s.getClientRects().length)"
        )
        assert heights and set(heights) == {1}
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.execute_script("window.scrollTo(0, 0)")
        shots = {"report-first-screen.png": None, "report-bad-boards.png": "bad", "report-pools.png": "serve"}
        for name, section in shots.items():
            if section:
                browser.execute_script("document.getElementById(arguments[0]).scrollIntoView()", section)
            assert browser.save_screenshot(str(ARTIFACTS / name))
            assert (ARTIFACTS / name).stat().st_size > 10_000
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
