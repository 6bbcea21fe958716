// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in .ci/npm) against
// compass-mcp over stdio: tools/list, then each of the eight tools once, asserting on the
// answers, then the resources, the prompt, a call in the stateless protocol era, and the
// writing tools' MCP App as the Inspector's --app-info probes it.
//
// Run by .ci/inspector.sh, which installs the Inspector and Node 22, builds the binary and
// seeds a data file: node .ci/inspector.mjs BINARY DATAFILE. Each step starts the server
// afresh, as the Inspector does; the data file carries the documents from one to the next.

import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [binary, data] = process.argv.slice(2);
if (!binary || !data) {
  console.error("usage: node .ci/inspector.mjs BINARY DATAFILE");
  process.exit(2);
}

// The Inspector keeps a catalog and client settings under $HOME; keep them out of the way.
const home = mkdtempSync(join(tmpdir(), "inspector-home-"));
const env = { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") };

const TOOLS = {
  list_documents: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  read_document: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  write_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  append_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  edit_document: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  comment_document: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  list_conversations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  read_conversation: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
};

let passed = 0;
const failures = [];

// inspect runs one Inspector CLI call against the binary and returns its exit code and result.
function inspect(options) {
  const args = [
    "--cli", binary,
    "-e", `COMPASS_DATA=${data}`, "-e", "COMPASS_ME=ana", "-e", "COMPASS_SPACE=personal",
    "-e", "COMPASS_LOG=warn", "-e", "TZ=UTC",
    // No page: the links are then the documents' resource URIs, as SPEC.md says (and no port
    // is taken; the page's own tests are web/ and e2e/browser).
    "-e", "COMPASS_WEB=off",
    "--format", "json", "--connect-timeout", "20000",
    ...options,
  ];
  const started = Date.now();
  const run = spawnSync("inspector", args, { env, encoding: "utf8", timeout: 60_000 });
  const ms = Date.now() - started;
  let out = null;
  try {
    out = JSON.parse(run.stdout);
  } catch {
    // left null: the check says what came instead
  }
  return { code: run.status, out, stdout: run.stdout, stderr: run.stderr, ms };
}

// step runs one call, checks it, and prints one line a step.
function step(name, options, check) {
  const r = inspect(options);
  let problem;
  try {
    problem = r.out === null ? `no JSON on stdout (exit ${r.code})` : check(r);
  } catch (e) {
    problem = `${e}`;
  }
  if (problem) {
    failures.push(name);
    console.log(`FAIL ${name} (${r.ms} ms): ${problem}`);
    console.log(`  stdout: ${r.stdout.trim()}`);
    if (r.stderr.trim()) console.log(`  stderr: ${r.stderr.trim()}`);
  } else {
    passed++;
    console.log(`ok   ${name} (${r.ms} ms)`);
  }
  return r;
}

// toolArgs gives --tool-arg pairs. The Inspector parses each value as JSON first, so every
// value goes as JSON: strings quoted, numbers bare.
const toolArgs = (args) => ["--tool-arg", ...Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`)];
const call = (tool, args = {}) => ["--method", "tools/call", "--tool-name", tool, ...(Object.keys(args).length ? toolArgs(args) : [])];
const text = (r) => (r.out.result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");

// answer checks a tool's answer: a plain result (exit 0) whose text has every one of wants.
function answer(...wants) {
  return (r) => {
    if (r.code !== 0) return `exit ${r.code}, want 0`;
    if (r.out.result?.isError) return `isError, want a result`;
    const t = text(r);
    const missing = wants.filter((w) => !(w instanceof RegExp ? w.test(t) : t.includes(w)));
    return missing.length ? `the answer lacks ${missing.map(String).join(" and ")}:\n${t}` : null;
  };
}

// refusal checks an error result: exit 5, isError, and text saying what to do.
function refusal(want) {
  return (r) => {
    if (r.code !== 5) return `exit ${r.code}, want 5 (an isError result)`;
    if (r.out.result?.isError !== true) return "no isError in the result";
    return text(r).includes(want) ? null : `the refusal doesn't say ${JSON.stringify(want)}:\n${text(r)}`;
  };
}

// tools/list: the eight, each with its annotations in a closed world.
step("tools/list: the eight tools with their annotations, schemas portable (--strict)", ["--method", "tools/list", "--strict"], (r) => {
  if (r.code !== 0) return `exit ${r.code}, want 0 (6 is a schema portability problem)`;
  const tools = r.out.result?.tools ?? [];
  const names = tools.map((t) => t.name); // in the order a model should meet them, TOOLS's
  const want = Object.keys(TOOLS);
  if (JSON.stringify(names) !== JSON.stringify(want)) return `tools are ${names}, want ${want}`;
  for (const t of tools) {
    const a = t.annotations ?? {};
    for (const [hint, v] of Object.entries({ ...TOOLS[t.name], openWorldHint: false })) {
      if (a[hint] !== v) return `${t.name}'s ${hint} is ${a[hint]}, want ${v}`;
    }
    if (!t.description || t.inputSchema?.type !== "object") return `${t.name} lacks a description or an object input schema`;
  }
  return null;
});

step("list_documents: none yet", call("list_documents"), answer("No documents in this space yet."));

let id = "";
step("write_document: a new document", call("write_document", { title: "Launch plan", text: "Record the trailer, then review the course page.\n" }), (r) => {
  const problem = answer("Saved [Launch plan](compass://document/", "as version 1: +1 \u22120 lines.")(r);
  id = text(r).match(/\/document\/([0-9A-Z]{26})\)/)?.[1] ?? "";
  return problem ?? (id ? null : "no document id in the answer");
});

step("append_document", call("append_document", { document: "Launch plan", text: "- Book the studio for Tuesday." }),
  answer("as version 2: +2 \u22120 lines."));

step("edit_document", call("edit_document", { document: "launch", old: "Tuesday", new: "Wednesday" }),
  answer("as version 3: +1 \u22121 lines."));

step("read_document: the text and who saved it", call("read_document", { document: id || "Launch plan" }),
  answer(`[Launch plan](compass://document/${id}) · version 3 of 3 · saved by inspector-cli for ana `,
    "\n\nRecord the trailer, then review the course page.\n\n- Book the studio for Wednesday."));

step("read_document: a version given as a number", call("read_document", { document: "Launch plan", version: 1 }),
  answer("version 1 of 3"));

step("list_documents: the one document", call("list_documents", { limit: 5 }),
  answer(`Documents here (1), latest saved first:\n- [Launch plan](compass://document/${id}) · id ${id} · version 3`,
    "opens: Record the trailer, then review the course page."));

step("comment_document: a comment on a line, for the person", call("comment_document", { document: "Launch plan", lines: "1", text: "Which trailer, the long one?" }),
  answer(`Comment 1 on line 1 of [Launch plan](compass://document/${id}), for ana to answer; the answers show in read_document.`));

step("list_conversations: the imported ones", call("list_conversations"),
  answer("pricing", "“Pricing”", "Pricing: we settled on 12 a month.", "trailer"));

step("read_conversation: what was said, not the private step", call("read_conversation", { conversation: "pricing" }), (r) => {
  const problem = answer("Pricing: we settled on 12 a month.", "You said: Ana: Pricing")(r);
  return problem ?? (text(r).includes("list_documents →") ? "a private step is shown" : null);
});

step("edit_document: text that isn't there is an error result", call("edit_document", { document: "Launch plan", old: "Record the podcast", new: "x" }),
  refusal("The text to replace isn't in [Launch plan]("));

step("read_conversation: none such is an error result", call("read_conversation", { conversation: "nowhere" }),
  refusal('No conversation "nowhere" in this space that you can read.'));

step("resources/list: the document as text/markdown", ["--method", "resources/list"], (r) => {
  const rs = r.out.result?.resources ?? [];
  if (rs.length !== 1) return `${rs.length} resources, want 1`;
  const want = { uri: `compass://document/${id}`, name: "Launch plan", mimeType: "text/markdown" };
  for (const [k, v] of Object.entries(want)) if (rs[0][k] !== v) return `its ${k} is ${rs[0][k]}, want ${v}`;
  return null;
});

step("resources/read: version 1", ["--method", "resources/read", "--uri", `compass://document/${id}/v/1`], (r) => {
  const c = r.out.result?.contents?.[0];
  return c?.mimeType === "text/markdown" && c?.text === "Record the trailer, then review the course page.\n" ? null : `contents ${JSON.stringify(r.out.result?.contents)}`;
});

step("prompts/get charter", ["--method", "prompts/get", "--prompt-name", "charter"], (r) => {
  const m = r.out.result?.messages?.[0];
  return m?.role === "user" && m?.content?.text?.includes("Read a document before you edit it") ? null : `messages ${JSON.stringify(r.out.result?.messages)}`;
});

step("read_document in the stateless era (2026-07-28)", ["--protocol-era", "modern", ...call("read_document", { document: "Launch plan" })],
  answer("version 3 of 3 · saved by inspector-cli for ana"));

// MCP Apps (issue 38): the Inspector's --app-info probes a tool's app (its _meta.ui and the
// ui:// resource it links, read but not rendered; the tool itself is not called). Declaring
// the apps extension (--advertise-apps), each writing tool links the one change view, an MCP
// App's HTML that asks for no other origin (no csp domains); without it, no tool has an app.
// What the view does in a host is e2e/browser's TestAppView*, in headless chromium.
let view = "";
for (const tool of ["write_document", "append_document", "edit_document", "comment_document"]) {
  step(`MCP Apps: ${tool} links the change view (--advertise-apps --app-info)`, ["--advertise-apps", "--app-info", ...call(tool)], (r) => {
    if (r.code !== 0) return `exit ${r.code}, want 0 (2 is a tool without an app)`;
    const a = r.out.appInfo ?? {};
    if (!a.hasApp || !a.resourceUri?.startsWith("ui://")) return `no ui:// app: ${JSON.stringify(a)}`;
    if (view && a.resourceUri !== view) return `links ${a.resourceUri}, another tool ${view}: want one view`;
    view = a.resourceUri;
    if (a.resourceError) return `reading ${a.resourceUri}: ${a.resourceError}`;
    if (a.resourceMimeType !== "text/html;profile=mcp-app") return `the view's mimeType is ${a.resourceMimeType}`;
    if (!Array.isArray(a.visibility) || !a.visibility.includes("model")) return `visibility ${JSON.stringify(a.visibility)}, want one with model`;
    const domains = Object.values(a.csp ?? {}).flat();
    return domains.length ? `the view asks for other origins: ${JSON.stringify(a.csp)}` : null;
  });
}
step("MCP Apps: a client that doesn't declare them gets no app (--app-info)", ["--app-info", ...call("edit_document")], (r) =>
  r.code === 2 && r.out.appInfo?.hasApp === false ? null : `exit ${r.code}, ${JSON.stringify(r.out)}; want exit 2 and hasApp false`);

console.log(`The Inspector CLI drove the server over stdio.`);
console.log(`Inspector: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
