# Sourced by .ci/run: installs ganache (npm, pinned by .ci/ganache/package-lock.json)
# and starts it with its deterministic development accounts, so chain's
# TestGovernedOnGanache runs the governance checks against an external node
# that is not go-ethereum, as do verify-decision's TestVerifyDecisionCommandGanache
# and TestVerifyDecisionOnServiceDecisions (third and fourth accounts, one test
# after the other) and zkp/ceremony's TestThreePartyCeremonyOnGanache
# (fifth): one account per package, so nonces never collide. Without node or npm
# the tests skip.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  (cd .ci/ganache && npm ci --no-audit --no-fund --silent)
  ganache_port="${GANACHE_PORT:-18545}"
  (cd .ci/ganache && exec node node_modules/.bin/ganache --wallet.deterministic --wallet.totalAccounts 5 \
    --server.host 127.0.0.1 --server.port "$ganache_port" --logging.quiet >/dev/null 2>&1) &
  ganache_pid=$!
  # Stop it at exit, keeping whatever EXIT trap was set before.
  eval "prev_exit_trap=$(trap -p EXIT | sed 's/^trap -- //; s/ EXIT$//')"
  trap "kill $ganache_pid 2>/dev/null || true; ${prev_exit_trap:-}" EXIT
  for _ in $(seq 1 60); do
    if curl -sf -X POST -H 'Content-Type: application/json' \
      --data '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "http://127.0.0.1:$ganache_port" >/dev/null; then
      export HEALTHAGENTS_TEST_GANACHE="http://127.0.0.1:$ganache_port"
      break
    fi
    sleep 0.5
  done
  [ -n "${HEALTHAGENTS_TEST_GANACHE:-}" ] || echo "ganache did not start: TestGovernedOnGanache will skip"
else
  echo "node/npm not found: TestGovernedOnGanache will skip"
fi
