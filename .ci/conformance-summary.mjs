// Reads the results the conformance suite's 0.2.0 prerelease wrote (-o DIR: a folder a
// scenario, each with checks.json) for one protocol revision, and the baseline it ran with,
// and prints what a reader needs at a glance: the checks that passed, those that failed as
// the baseline expects (each entry a scenario:check), and the wire-schema-valid count over
// every message the server sent. Exits 1 on any wire-schema-valid violation (in any scenario
// run, scored or not), on no results at all, and when the suite failed (SUITE_STATUS).
//
// The suite fails on a failed check of a scenario the revision requires that the baseline
// doesn't list, and on a listed one that passes. It also runs scenarios beyond what the
// revision requires (the tasks extension, pending ones), which don't count for conformance
// and need no entry; when the suite passed, the failed checks the baseline doesn't list
// are theirs, and their scenarios are named, not judged.
//
//   node .ci/conformance-summary.mjs REVISION RESULTS_DIR BASELINE.yml SUITE_STATUS
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const [revision, dir, baselineFile, suiteStatus] = process.argv.slice(2);
const baseline = new Set(
  readFileSync(baselineFile, "utf8")
    .split("\n")
    .map((l) => l.match(/^\s*-\s*([a-z0-9-]+:[a-z0-9-]+)/))
    .filter(Boolean)
    .map((m) => m[1]),
);
let passed = 0, warned = 0, expected = 0, messages = 0;
const unexpected = [], violations = [], scenarios = new Set();
for (const d of existsSync(dir) ? readdirSync(dir) : []) {
  const file = join(dir, d, "checks.json");
  if (!existsSync(file)) continue;
  const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  scenarios.add(scenario);
  for (const c of JSON.parse(readFileSync(file, "utf8"))) {
    const key = `${scenario}:${c.id}`;
    if (c.id === "wire-schema-valid") {
      messages += c.details?.messagesValidated ?? 0;
      for (const v of c.details?.violations ?? []) violations.push(`${scenario}: ${JSON.stringify(v).slice(0, 300)}`);
    }
    if (c.status === "SUCCESS" || c.status === "SKIPPED" || c.status === "INFO") passed++;
    else if (baseline.has(key)) expected++;
    else if (c.status === "WARNING") warned++;
    else unexpected.push({ scenario, line: `${key}: ${c.errorMessage ?? c.status}` });
  }
}
console.log(`conformance ${revision} (@modelcontextprotocol/conformance 0.2.0-alpha.12, --requirements ${revision}, streamable HTTP):`);
console.log(`  ${scenarios.size} scenarios run; checks: ${passed} passed, ${expected} failed as the baseline expects (${baseline.size} entries, each a fixture's), ${warned} other warnings`);
console.log(`  wire-schema-valid: ${messages} messages the server sent, ${violations.length} violations`);
let ok = scenarios.size > 0;
if (!ok) console.log("  no results could be read");
for (const v of violations) console.log(`  VIOLATION ${v}`), (ok = false);
if (suiteStatus === "0") {
  const unscored = [...new Set(unexpected.map((u) => u.scenario))].sort();
  if (unscored.length) console.log(`  not required by ${revision}, run and not scored by the suite (${unexpected.length} checks failed): ${unscored.join(", ")}`);
} else {
  console.log(`  the suite failed (exit ${suiteStatus}); checks failed that the baseline doesn't list:`);
  for (const u of unexpected) console.log(`    ${u.line.slice(0, 300)}`);
  ok = false;
}
process.exit(ok ? 0 : 1);
