# Sourced by .ci/run: installs onnxruntime-node (pinned by
# testdata/onnxruntime/package-lock.json), a runtime we did not write, so the
# federated tests run the service's ONNX exports with it (federated/onnx/onnxtest).
# Its install script only fetches GPU providers, which the tests do not use:
# --ignore-scripts keeps the CPU runtime the package ships. Without node or
# npm the tests skip.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (cd testdata/onnxruntime && npm ci --no-audit --no-fund --silent --ignore-scripts) &&
    export HEALTHAGENTS_TEST_ONNXRUNTIME="$PWD/testdata/onnxruntime"
else
  echo "node/npm not found: the ONNX export tests will skip"
fi
