"""Browser tests: the launched app in headless Debian chromium through Playwright (``browser``)."""
