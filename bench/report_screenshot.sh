#!/usr/bin/env bash
# Render `attune report --html` and screenshot it with headless Chromium, to look at it as a user would.
#
#   bench/report_screenshot.sh RECORDS.jsonl OUT_DIR [AGREEMENT.json]
#
# Writes OUT_DIR/report.html and OUT_DIR/report.png (1200 px wide, full report height up to 6000 px).
# Exits 0 with a message when chromium is not installed (apt-get install -y chromium).
set -euo pipefail
records=${1:?usage: $0 RECORDS.jsonl OUT_DIR [AGREEMENT.json]}
out=${2:?usage: $0 RECORDS.jsonl OUT_DIR [AGREEMENT.json]}
agreement=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$here/.venv/bin/python}
mkdir -p "$out"
args=(report "$records" --html "$out/report.html")
[[ -n "$agreement" ]] && args+=(--agreement "$agreement")
"$py" -m attune "${args[@]}" > "$out/report.txt"
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "chromium not installed: wrote $out/report.html only" >&2
  exit 0
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
height=${HEIGHT:-6000}
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$profile" --screenshot="$out/report.png" --window-size=1200,"$height" \
  "file://$(realpath "$out/report.html")" > /dev/null 2>&1
echo "wrote $out/report.html and $out/report.png"
