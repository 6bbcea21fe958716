#!/usr/bin/env bash
# Search quality on a sample of BEIR SciFact, through the tools over stdio, beside the
# reference BM25 of the same run (../shared/beir/eval.py). The figures are printed, not
# judged: the run checks that the benchmark still runs (a binary that answers every
# query) and shows what it gives. The sample: the first 500 documents of the training
# split and the claims whose judged answers are all among them, made afresh in a
# temporary folder (never committed). The whole split:
#
#   go build -o /tmp/compass-search ./cmd/compass-mcp && python3 ../shared/beir/eval.py /tmp/compass-search
#
# COMPASS_BEIR (a folder laid out as ../shared/beir/scifact) overrides where the data is;
# COMPASS_EVAL_DOCS the sample's size.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
beir=""
for d in "$root/../shared/beir" "$root/../../shared/beir"; do
  if [ -f "$d/eval.py" ]; then beir="$d"; break; fi
done
if [ -z "$beir" ]; then
  # The benchmark and its data live beside the repository, not in it (../shared/beir): a
  # clone without them has nothing to measure. Said loudly, not a failure of the code.
  echo "search-eval: WARNING: no shared/beir beside the repository ($root/../shared/beir): nothing measured" >&2
  exit 0
fi
data="${COMPASS_BEIR:-$beir/scifact}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/compass-mcp" "$root/cmd/compass-mcp"
python3 - "$data" "$tmp/sample" "${COMPASS_EVAL_DOCS:-500}" <<'PY'
import glob, json, os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out)
docs = [l for _, l in zip(range(n), open(os.path.join(src, "corpus.jsonl"), encoding="utf-8"))]
ids = {json.loads(l)["_id"] for l in docs}
open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8").writelines(docs)
qrels_file = glob.glob(os.path.join(src, "qrels-*.tsv"))[0]
rows = open(qrels_file).read().splitlines()
by_query = {}
for row in rows[1:]:
    q, d, s = row.split("\t")
    by_query.setdefault(q, []).append((d, s))
keep = {q for q, ds in by_query.items() if all(d in ids for d, _ in ds)}
with open(os.path.join(out, os.path.basename(qrels_file)), "w") as f:
    f.write(rows[0] + "\n")
    for q in sorted(keep):
        for d, s in by_query[q]:
            f.write("%s\t%s\t%s\n" % (q, d, s))
queries_file = glob.glob(os.path.join(src, "queries-*.jsonl"))[0]
with open(os.path.join(out, os.path.basename(queries_file)), "w", encoding="utf-8") as f:
    for l in open(queries_file, encoding="utf-8"):
        if json.loads(l)["_id"] in keep:
            f.write(l)
print("search-eval: %d documents, %d queries" % (len(docs), len(keep)))
PY
python3 "$beir/eval.py" "$tmp/compass-mcp" "$tmp/sample"
