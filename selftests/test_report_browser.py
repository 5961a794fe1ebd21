"""report.html in a real browser: Debian's headless Chromium driven through its own
chromedriver (no driver download), offline, on the lane-down recording: the verdict, thor-3
mgbe1_0 drawn red at switch port 10, an evidence section that opens on a click, and the
configuration table's power-mode row the same on every Thor. A
screenshot is left at reports/selftest-screenshot.png."""

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from selftests.report_suite import run_report
from selftests.suite import REPLAYS, REPO

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SCREENSHOT = REPO / "reports" / "selftest-screenshot.png"
RED = "rgb(198, 40, 40)"   # rackproof.report.style.RED


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND",   # offline: no name resolves
                 f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()   # stops Chromium and chromedriver


def test_report_in_headless_chromium(pytester, browser):
    run = run_report(pytester, "--replay", str(REPLAYS / "thor5-lane-down-fec-mismatch"))
    browser.get((run.folder / "report.html").as_uri())

    banner = browser.find_element(By.ID, "verdict-banner")
    assert banner.text.startswith("ACCEPTED WITH LIMITS"), banner.text
    assert banner.get_attribute("data-verdict") == run.results["verdict"]["decision"]

    lane = browser.find_element(By.CSS_SELECTOR, 'svg.topology g.lane[data-node="thor-3"][data-lane="mgbe1_0"]')
    assert (lane.get_attribute("data-port"), lane.get_attribute("data-state")) == ("10", "failed")
    wire = lane.find_element(By.CSS_SELECTOR, "path.wire")
    assert wire.value_of_css_property("stroke") == RED
    port = browser.find_element(By.CSS_SELECTOR, 'svg.topology g.port[data-port="10"] rect')
    assert port.value_of_css_property("fill") == RED
    # the red wire ends at port 10 (bottom middle), not somewhere near it
    end, port_box = browser.execute_script(
        "const p = arguments[0], r = arguments[1], e = p.getPointAtLength(p.getTotalLength());"
        "return [[e.x, e.y], [r.x.baseVal.value + r.width.baseVal.value / 2, r.y.baseVal.value + r.height.baseVal.value]];",
        wire, port)
    assert end == pytest.approx(port_box, abs=0.5)
    healthy = browser.find_element(By.CSS_SELECTOR, 'svg.topology g.lane[data-node="thor-3"][data-lane="mgbe0_0"] path')
    assert healthy.value_of_css_property("stroke") != RED

    evidence = browser.find_element(
        By.CSS_SELECTOR, 'details.evidence[data-test$="::test_lane_link_detected[thor-3:mgbe1_0]"]')
    output = evidence.find_element(By.CSS_SELECTOR, "pre")
    assert evidence.get_attribute("open") is None and not output.is_displayed()
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", evidence)
    evidence.find_element(By.TAG_NAME, "summary").click()
    assert evidence.get_attribute("open") == "true" and output.is_displayed()
    assert "Link detected: no" in output.text

    # the configuration table: every Thor's power mode in one row, each cell the same (not marked)
    row = browser.find_element(By.CSS_SELECTOR, 'table.configuration tr[data-setting="power mode (nvpmodel)"]')
    cells = row.find_elements(By.CSS_SELECTOR, "td[data-state]")
    assert [(c.text, c.get_attribute("data-state")) for c in cells] == [("MAXN", "same")] * 5
    assert cells[0].value_of_css_property("color") != RED

    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(("file:", "data:")) for url in loaded), loaded   # nothing from a network

    top_of_checks = browser.execute_script("return document.getElementById('nodes').offsetTop")
    browser.set_window_size(1400, top_of_checks)
    browser.execute_script("window.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
