# Sourced by .ci/run: builds Kubo (the reference IPFS node) once, caches the
# binary, starts an offline node for the tests and exports
# HEALTHAGENTS_TEST_IPFS so the real-node tests (ipfs, app) run instead of
# skipping. Stops the node when the calling script exits.
KUBO_VERSION="${KUBO_VERSION:-v0.38.0}"
KUBO_BIN="${KUBO_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/healthagents/kubo-$KUBO_VERSION/ipfs}"
if [ ! -x "$KUBO_BIN" ]; then
  echo "-- building kubo $KUBO_VERSION (once; cached at $KUBO_BIN)"
  kubo_work="$(mktemp -d)"
  # Download outside our module so our go.mod and go.sum are untouched.
  kubo_src="$(cd "$kubo_work" && GOFLAGS=-mod=mod go mod download -json "github.com/ipfs/kubo@$KUBO_VERSION" \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  mkdir "$kubo_work/src" && cp -r "$kubo_src/." "$kubo_work/src" && chmod -R u+w "$kubo_work/src"
  # kubo 0.38 pins a cockroachdb/swiss that does not build with Go 1.26.
  (cd "$kubo_work/src" \
    && go mod edit -require=github.com/cockroachdb/swiss@v0.0.0-20260820225851-333444432258 \
    && go build -mod=mod -o "$kubo_work/ipfs" ./cmd/ipfs)
  mkdir -p "$(dirname "$KUBO_BIN")" && mv "$kubo_work/ipfs" "$KUBO_BIN" && rm -rf "$kubo_work"
fi
export IPFS_PATH="$(mktemp -d)"
"$KUBO_BIN" init --profile test >/dev/null
"$KUBO_BIN" daemon --offline >"$IPFS_PATH/daemon.log" 2>&1 &
KUBO_PID=$!
trap 'kill "$KUBO_PID" 2>/dev/null; wait "$KUBO_PID" 2>/dev/null; rm -rf "$IPFS_PATH"' EXIT
for _ in $(seq 150); do grep -q 'Daemon is ready' "$IPFS_PATH/daemon.log" && break; sleep 0.2; done
grep -q 'Daemon is ready' "$IPFS_PATH/daemon.log" || { cat "$IPFS_PATH/daemon.log"; exit 1; }
export HEALTHAGENTS_TEST_IPFS="$(cat "$IPFS_PATH/api")"
echo "kubo $("$KUBO_BIN" version --number) at $HEALTHAGENTS_TEST_IPFS"
