// A team's server, driven by the official TypeScript SDK's client and the MCP Inspector's
// CLI, each sending "Authorization: Bearer <token>" to /spaces/{space}/mcp: the tools a
// token is offered, a write and the author it records, what a read-only token may not do,
// and the 401s and 403s.
//
// Run by .ci/team.sh, which installs the packages, seeds a data file (Ana and Ben, members
// of launch; Ana's "Personal plan" in personal, "Launch plan" in launch), makes the tokens
// (TEAM_ANA: Ana with agent north; TEAM_BEN_READ_ONLY; TEAM_REVOKED) and serves it:
// node .ci/team.mjs BASE_URL.

import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The SDK is installed in .ci/node (by .ci/node.sh), not beside this file, where a bare
// import would look.
const sdk = (path) => new URL(`./node/node_modules/@modelcontextprotocol/sdk/dist/esm/${path}`, import.meta.url);
const { Client } = await import(sdk("client/index.js"));
const { StreamableHTTPClientTransport } = await import(sdk("client/streamableHttp.js"));

const base = process.argv[2];
const { TEAM_ANA: ana, TEAM_BEN_READ_ONLY: benReadOnly, TEAM_REVOKED: revoked } = process.env;
if (!base || !ana || !benReadOnly || !revoked) {
  console.error("usage: TEAM_ANA=... TEAM_BEN_READ_ONLY=... TEAM_REVOKED=... node .ci/team.mjs BASE_URL");
  process.exit(2);
}
const launch = `${base}/spaces/launch/mcp`;
const personal = `${base}/spaces/personal/mcp`;
const ALL = ["append_document", "comment_document", "edit_document", "list_conversations", "list_documents", "read_conversation", "read_document", "write_document"];
const READING = ["list_conversations", "list_documents", "read_conversation", "read_document"];

let passed = 0;
const failures = [];
async function step(name, fn) {
  const started = Date.now();
  let problem;
  try {
    problem = await fn();
  } catch (e) {
    problem = `threw ${e?.stack ?? e}`;
  }
  const ms = Date.now() - started;
  if (problem) {
    failures.push(name);
    console.log(`FAIL ${name} (${ms} ms): ${problem}`);
  } else {
    passed++;
    console.log(`ok   ${name} (${ms} ms)`);
  }
}

// connect opens an SDK client session on url with token as its bearer token.
async function connect(url, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const client = new Client({ name: "typescript-sdk-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
const names = (tools) => tools.map((t) => t.name).sort().join(",");
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");

// refusedWith checks that connecting fails with an HTTP status.
async function refusedWith(url, token, status) {
  try {
    const c = await connect(url, token);
    await c.close();
    return `connected, want HTTP ${status}`;
  } catch (e) {
    return e.code === status || String(e.message).includes(`HTTP ${status}`) ? null : `failed with ${e.message}, want HTTP ${status}`;
  }
}

await step("SDK: Ana's token at /spaces/launch/mcp is offered the eight tools, writes, and is recorded as north for Ana", async () => {
  const c = await connect(launch, ana);
  try {
    const tools = names((await c.listTools()).tools);
    if (tools !== ALL.join(",")) return `tools are ${tools}`;
    const saved = text(await c.callTool({ name: "write_document", arguments: { title: "From TypeScript", text: "written through the SDK\n" } }));
    if (!saved.startsWith("Saved")) return `write_document answered ${saved}`;
    const read = text(await c.callTool({ name: "read_document", arguments: { document: "From TypeScript" } }));
    if (!read.includes("saved by north for Ana")) return `read_document's header doesn't say north for Ana:\n${read}`;
    const list = text(await c.callTool({ name: "list_documents", arguments: {} }));
    if (!list.includes("Launch plan") || list.includes("Personal plan")) return `list_documents in launch shows:\n${list}`;
    return null;
  } finally {
    await c.close();
  }
});

await step("SDK: Ben's read-only token is offered the four reading tools, and a write is refused", async () => {
  const c = await connect(launch, benReadOnly);
  try {
    const tools = names((await c.listTools()).tools);
    if (tools !== READING.join(",")) return `tools are ${tools}`;
    try {
      const res = await c.callTool({ name: "append_document", arguments: { document: "Launch plan", text: "sneaked in" } });
      return `append_document answered ${text(res)}`;
    } catch (e) {
      if (!String(e.message).includes("not found")) return `append_document failed with ${e.message}, want an unknown tool`;
    }
    const read = text(await c.callTool({ name: "read_document", arguments: { document: "Launch plan" } }));
    return read.includes("sneaked in") ? `the refused append is in the text:\n${read}` : null;
  } finally {
    await c.close();
  }
});

await step("SDK: Ben's token at personal, where he is no member, gets 403", () => refusedWith(personal, benReadOnly, 403));
await step("SDK: a revoked token gets 401", () => refusedWith(launch, revoked, 401));
await step("SDK: no token gets 401", () => refusedWith(launch, "", 401));

// The Inspector keeps a catalog and client settings under $HOME; keep them out of the way.
const home = mkdtempSync(join(tmpdir(), "inspector-home-"));
const env = { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") };
function inspect(url, token, ...options) {
  const args = ["--cli", url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--format", "json", "--connect-timeout", "20000", ...options];
  const run = spawnSync("inspector", args, { env, encoding: "utf8", timeout: 60_000 });
  let out = null;
  try {
    out = JSON.parse(run.stdout);
  } catch {
    // left null: the check says what came instead
  }
  return { code: run.status, out, stdout: run.stdout, stderr: run.stderr };
}
const shown = (r) => `exit ${r.code}; stdout: ${r.stdout.trim()}; stderr: ${r.stderr.trim()}`;

await step("Inspector CLI: Ana's token lists the eight tools at /spaces/launch/mcp", () => {
  const r = inspect(launch, ana, "--method", "tools/list");
  const tools = r.out ? names(r.out.result?.tools ?? []) : "";
  return r.code === 0 && tools === ALL.join(",") ? null : `tools ${tools}; ${shown(r)}`;
});
await step("Inspector CLI: Ana's token reads what the SDK wrote, saved by north for Ana", () => {
  const r = inspect(launch, ana, "--method", "tools/call", "--tool-name", "read_document", "--tool-arg", `document=${JSON.stringify("From TypeScript")}`);
  const t = r.out ? text(r.out.result ?? {}) : "";
  return r.code === 0 && t.includes("saved by north for Ana") && t.includes("written through the SDK") ? null : shown(r);
});
await step("Inspector CLI: Ben's read-only token lists the four reading tools", () => {
  const r = inspect(launch, benReadOnly, "--method", "tools/list");
  const tools = r.out ? names(r.out.result?.tools ?? []) : "";
  return r.code === 0 && tools === READING.join(",") ? null : `tools ${tools}; ${shown(r)}`;
});
// On a 401 the Inspector turns to OAuth (auth_required: it won't open a browser here).
await step("Inspector CLI: a revoked token is refused, and the Inspector asks for sign-in", () => {
  const r = inspect(launch, revoked, "--method", "tools/list");
  return r.code !== 0 && `${r.stdout}${r.stderr}`.includes("auth_required") ? null : `want auth_required; ${shown(r)}`;
});

console.log(`Team clients: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
