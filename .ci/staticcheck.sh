#!/usr/bin/env bash
# staticcheck 2026.2.2 on the whole module; it must be clean on non-generated
# code. The module proxy serves that release by its module version, v0.8.2
# (`staticcheck -version` prints "staticcheck 2026.2.2 (0.8.2)"). Generated
# files (a "// Code generated ... DO NOT EDIT." line: the abigen bindings)
# are left out, since regenerating them would undo any change there.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v0.8.2

generated="$(grep -rlE '^// Code generated .* DO NOT EDIT\.$' --include='*.go' . | sed 's|^\./||' | sort)"
status=0
out="$(go run "honnef.co/go/tools/cmd/staticcheck@${version}" ./... 2>&1)" || status=$?
findings=""
while IFS= read -r line; do
  case "$line" in
    *.go:[0-9]*:*)
      file="${line%%:*}"
      if ! grep -qxF "$file" <<<"$generated"; then findings+="$line"$'\n'; fi
      ;;
  esac
done <<<"$out"
if [ -n "$findings" ]; then
  printf 'staticcheck found:\n%s' "$findings"
  exit 1
fi
if [ "$status" -ne 0 ] && ! grep -qE '\.go:[0-9]+:' <<<"$out"; then
  # staticcheck itself failed (not a finding): show why.
  printf '%s\n' "$out"
  exit 1
fi
echo "staticcheck ${version}: clean (generated files aside)"
