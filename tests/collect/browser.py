"""Headless Chromium for the report's tests: the binary (skipped where missing, failed on CI, which
installs it) and one run of it with a throwaway profile."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def chromium_binary():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing (CI installs it: apt-get install -y chromium)")
        pytest.skip("no chromium: apt-get install -y chromium")
    return found


def run_chromium(binary, profile, *args):
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--hide-scrollbars"]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, check=True)
