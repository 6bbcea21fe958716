#!/usr/bin/env python3
"""CISI in BEIR's format, for ../shared/beir/eval.py: a second dataset, of another field.

    python3 internal/cmd/bench/beir/cisi.py SRC OUT     (SRC holds CISI.ALL, CISI.QRY, CISI.REL)
    python3 ../shared/beir/eval.py /tmp/compass-search OUT

CISI is a classic public test collection (University of Glasgow's IR group): 1,460 abstracts
in library and information science, 112 questions, 76 of them with judged answers (3,114
pairs, all relevant). Its files are not kept here (docs/SEARCH.md says where they were had).
Writes OUT/corpus.jsonl, OUT/queries-all.jsonl and OUT/qrels-all.tsv; white space (CISI.ALL has
tabs in titles) is folded to single spaces. Standard library only."""
import json, re, sys
src, out = sys.argv[1], sys.argv[2]
def records(path):
    recs, cur, field = [], None, None
    for line in open(path, encoding="latin-1"):
        m = re.match(r"^\.([ITAWBX])\s*(.*)$", line.rstrip("\n"))
        if m:
            tag, rest = m.groups()
            if tag == "I":
                cur = {"id": rest.strip()}; recs.append(cur); field = None
            else:
                field = tag; cur.setdefault(tag, [])
                if rest.strip(): cur[tag].append(rest.strip())
            continue
        if cur is not None and field:
            cur[field].append(line.strip())
    return recs
docs = records(src + "/CISI.ALL")
with open(out + "/corpus.jsonl", "w") as f:
    for d in docs:
        f.write(json.dumps({"_id": d["id"], "title": " ".join(" ".join(d.get("T", [])).split()), "text": " ".join(" ".join(d.get("W", [])).split())}) + "\n")
qs = records(src + "/CISI.QRY")
with open(out + "/queries-all.jsonl", "w") as f:
    for q in qs:
        f.write(json.dumps({"_id": q["id"], "text": " ".join(" ".join(q.get("W", [])).split())}) + "\n")
pairs = set()
for line in open(src + "/CISI.REL"):
    p = line.split()
    if len(p) >= 2: pairs.add((p[0], p[1]))
with open(out + "/qrels-all.tsv", "w") as f:
    f.write("query-id\tcorpus-id\tscore\n")
    for q, d in sorted(pairs, key=lambda x: (int(x[0]), int(x[1]))):
        f.write(f"{q}\t{d}\t1\n")
print(len(docs), "docs", len(qs), "queries", len(pairs), "pairs", len({q for q,_ in pairs}), "judged queries")
