# Sourced by .ci/run: installs Debian's Chromium (and ChromeDriver) so the
# headless-browser tests load /docs and /redoc at the root and under a mount
# prefix (server TestDocsRenderInBrowser, internal/openapi
# TestPagesRenderInBrowser). Without apt-get or root they skip.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null || echo "chromium did not install"
fi
if command -v chromium >/dev/null 2>&1; then
  HEALTHAGENTS_TEST_BROWSER="$(command -v chromium)"
  export HEALTHAGENTS_TEST_BROWSER
  export OPENAPI_BROWSER="$HEALTHAGENTS_TEST_BROWSER"
else
  echo "chromium not found: the headless-browser tests will skip"
fi
