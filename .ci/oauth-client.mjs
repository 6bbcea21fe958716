// An MCP client that signs in with OAuth the way Claude's connectors do, using the official
// TypeScript SDK's own client OAuth (@modelcontextprotocol/sdk, pinned in .ci/npm): its
// auth() with an OAuthClientProvider discovers the server from the 401, registers (dynamic
// client registration), and sends the person to the authorization URL.
//
// Driven by cmd/compass-mcp's TestOAuthEndToEnd, which plays the person in headless
// Chromium. node .ci/oauth-client.mjs SERVER_URL, then, one line each on stdout:
//
//	AUTHORIZE <url>   open this in the browser signed in as the person, and allow
//	CALLED <text>     tools were called with the token the code was exchanged for
//	REFRESHED         the refresh token gave a new access token, which works
//	TOKEN <token>     that access token, for another client to try
//	REVOKE <client>   revoke the token row of this client now, then write a line on stdin
//	REFUSED           after the revocation, the token and its refresh were refused
//
// Anything wrong: a message on stderr and exit 1.

import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";

const sdk = (p) => new URL(`./node/node_modules/@modelcontextprotocol/sdk/dist/esm/${p}`, import.meta.url).href;
const { Client } = await import(sdk("client/index.js"));
const { StreamableHTTPClientTransport } = await import(sdk("client/streamableHttp.js"));
const { auth, UnauthorizedError } = await import(sdk("client/auth.js"));

const serverUrl = process.argv[2];
if (!serverUrl) {
  console.error("usage: node .ci/oauth-client.mjs SERVER_URL");
  process.exit(2);
}
const fail = (msg) => {
  console.error("oauth-client: " + msg);
  process.exit(1);
};
const say = (line) => process.stdout.write(line + "\n");
const stdin = createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => stdin.once("line", resolve));

// The redirect URI: a loopback listener, as a native app has (RFC 8252).
let gotCode;
const codeArrived = new Promise((resolve) => (gotCode = resolve));
const callback = createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end(u.searchParams.get("code") ? "<p id=done>Signed in: you can close this tab.</p>" : `<p id=done>Refused: ${u.searchParams.get("error")}</p>`);
  gotCode(u.searchParams);
});
await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${callback.address().port}/callback`;

class Provider {
  constructor() {
    this.redirects = 0;
  }
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "SDK Test Client",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    this.sentState = randomBytes(16).toString("hex");
    return this.sentState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t) {
    this.saved = t;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  redirectToAuthorization(url) {
    this.redirects++;
    this.authorizationUrl = url;
    if (this.redirects === 1) say("AUTHORIZE " + url.href);
  }
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.client = undefined;
  }
}

const provider = new Provider();
const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  const client = new Client({ name: "sdk-oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};
const text = (result) => result.content.map((c) => c.text).join("\n");

// 1. Unauthorized: the SDK discovers, registers and sends the person to the consent page.
try {
  await connect();
  fail("the server let an unauthenticated client in");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) fail("first connect: expected UnauthorizedError, got " + e);
}
const auz = provider.authorizationUrl;
if (!auz) fail("the SDK never sent the person to an authorization URL");
if (auz.searchParams.get("code_challenge_method") !== "S256") fail("no S256 challenge in " + auz);
if (!auz.searchParams.get("resource")) fail("no resource in " + auz);

// 2. The person allows in the browser; the code comes back to the loopback redirect.
const params = await codeArrived;
if (params.get("state") !== provider.sentState) fail(`state came back as ${params.get("state")}, sent ${provider.sentState}`);
const code = params.get("code");
if (!code) fail("no code: " + params.get("error") + " " + params.get("error_description"));
{
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  await transport.finishAuth(code);
}
if (!provider.saved?.access_token?.startsWith("cmp_")) fail("no cmp_ access token after the exchange: " + JSON.stringify(provider.saved));

// 3. Tools, with the token.
{
  const { client } = await connect();
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === "write_document")) fail("write_document not offered: " + tools.map((t) => t.name));
  const w = await client.callTool({ name: "write_document", arguments: { title: "Signed in", text: "Written over OAuth." } });
  if (w.isError) fail("write_document: " + text(w));
  const l = await client.callTool({ name: "list_documents", arguments: {} });
  say("CALLED " + text(l).split("\n").slice(0, 2).join(" | "));
  await client.close();
}

// 4. Refresh: auth() with a refresh token rotates it; the new access token works.
const before = provider.saved;
if ((await auth(provider, { serverUrl })) !== "AUTHORIZED") fail("refresh did not authorize");
if (provider.saved.access_token === before.access_token || provider.saved.refresh_token === before.refresh_token) {
  fail("refresh gave the same tokens back");
}
{
  const { client } = await connect();
  const r = await client.callTool({ name: "read_document", arguments: { document: "Signed in" } });
  if (r.isError || !text(r).includes("Written over OAuth.")) fail("read_document after refresh: " + text(r));
  await client.close();
}
say("REFRESHED");
say("TOKEN " + provider.saved.access_token);

// 5. The person revokes the row; the token and its refresh are refused, and the SDK can only
// send the person to sign in again.
say("REVOKE " + provider.clientMetadata.client_name);
await nextLine();
try {
  const { client } = await connect();
  await client.listTools();
  fail("a revoked token still works");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) fail("after revoking: expected UnauthorizedError, got " + e);
}
if (provider.redirects !== 2) fail(`after revoking, the SDK went to sign in ${provider.redirects - 1} times, want once (its refresh refused)`);
say("REFUSED");
callback.close();
stdin.close();
process.exit(0);
