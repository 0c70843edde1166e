"""Debian's headless Chromium driven through chromium-driver (selenium), for the tests that
look at a page as its reader does: Perses' dashboards and the HTML run report."""

from __future__ import annotations

import shutil
from pathlib import Path

from selenium import webdriver

CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def headless_chrome(width: int, height: int) -> webdriver.Chrome:
    """A fresh browser of width × height CSS pixels at scale 1, sRGB, no scrollbars."""
    assert Path(CHROMEDRIVER).is_file(), "chromedriver missing: make system-deps"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--force-color-profile=srgb",
        "--force-device-scale-factor=1",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(60)
    return driver
