// The search function's MCP endpoint (`/mcp`) driven by the official MCP TypeScript SDK's
// client over Streamable HTTP: initialize -> tools/list -> tools/call search_site ->
// tools/call get_page, against the REAL search function served by `cargo lambda watch` on
// the sample knowledge base. cargo-lambda comes from infra/venv.sh (infra/test.sh runs it
// first). The first run may have to build the function: allow a long wait.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cargoLambda = path.join(repo, '.venv/bin/cargo-lambda');

let watch, mcpUrl, searchUrl;

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

before(async () => {
  assert.ok(fs.existsSync(cargoLambda), `${cargoLambda} is missing: run infra/venv.sh`);
  const port = await freePort();
  const env = { ...process.env, PATH: `${path.dirname(cargoLambda)}:${process.env.PATH}`,
    KB_SOURCE: path.join(repo, 'knowledge_base.json'), ALLOWED_ORIGINS: 'https://site.example' };
  // Its own process group, so the whole tree (watcher + function) is stopped afterwards.
  watch = spawn(cargoLambda, ['lambda', 'watch', '--invoke-address', '127.0.0.1', '--invoke-port', String(port)],
    { cwd: repo, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = () => { try { process.kill(-watch.pid, 'SIGTERM'); } catch { /* gone */ } };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { stop(); process.exit(130); });
  let log = '';
  watch.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  searchUrl = `http://127.0.0.1:${port}/lambda-url/search/`;
  mcpUrl = new URL(`${searchUrl}mcp`);
  const deadline = Date.now() + 20 * 60 * 1000;   // a cold build on 2 cores is slow
  for (;;) {
    try {
      const r = await fetch(`${searchUrl}?q=LLaVA`);
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline || watch.exitCode !== null) throw new Error(`search function did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}, { timeout: 21 * 60 * 1000 });

after(() => {
  if (watch && watch.exitCode === null) {
    try { process.kill(-watch.pid, 'SIGTERM'); } catch { /* already gone */ }
  }
});

test('SDK client: initialize, list tools, search the site, read a page', async () => {
  const client = new Client({ name: 'rag-chat-tests', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl);
  await client.connect(transport);
  try {
    // The newest revision the SDK speaks is one the server serves: no downgrade.
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.equal(client.getServerVersion().name, 'rag-chat-search');
    assert.ok(client.getServerCapabilities().tools, 'tools capability');
    assert.match(client.getInstructions(), /search_site/);
    // Stateless: no session id was handed out.
    assert.equal(transport.sessionId, undefined);

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search_site', 'get_page']);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object');
      assert.ok(t.outputSchema, `${t.name} has an output schema`);
    }

    // The SDK checks structuredContent against the tool's outputSchema (ajv): a result
    // that did not match it would throw here.
    const search = await client.callTool({ name: 'search_site',
      arguments: { query: '人脸识别训练', top_k: 3, filters: { type: 'publication' } } });
    assert.ok(!search.isError, JSON.stringify(search));
    const { hits } = search.structuredContent;
    assert.ok(hits.length >= 1 && hits.length <= 3, JSON.stringify(hits));
    assert.ok(hits.some((h) => h.id.includes('partial_fc')), JSON.stringify(hits));
    for (const h of hits) {
      assert.equal(h.type, 'publication');
      assert.ok(h.title && h.snippet && h.score > 0, JSON.stringify(h));
      // Only entries with a link in the knowledge base have one.
      if ('url' in h) assert.match(h.url, /^https:\/\//);
    }
    assert.deepEqual(JSON.parse(search.content[0].text), search.structuredContent);

    const hit = hits.find((h) => h.id.includes('partial_fc'));
    const byId = await client.callTool({ name: 'get_page', arguments: { id: hit.id } });
    assert.ok(!byId.isError, JSON.stringify(byId));
    assert.equal(byId.structuredContent.id, hit.id);
    assert.equal(byId.structuredContent.url, hit.url);
    assert.ok(byId.content[0].text.startsWith(`# ${hit.title}\n`), byId.content[0].text);

    const byUrl = await client.callTool({ name: 'get_page', arguments: { url: hit.url, max_chars: 40 } });
    assert.equal(byUrl.structuredContent.id, hit.id);
    assert.equal([...byUrl.structuredContent.text].length, 40);
    assert.equal(byUrl.structuredContent.next_offset, 40);
    assert.match(byUrl.content[0].text, /\[truncated: characters 0-40 of \d+ shown; call get_page with offset 40 for the rest\]$/);

    const missing = await client.callTool({ name: 'get_page', arguments: { id: 'no-such-entry' } });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text, /no entry/);

    await client.ping();
  } finally {
    await client.close();
  }
});

test('malformed requests get JSON-RPC error objects', async () => {
  const post = async (body, headers = {}) => {
    const r = await fetch(mcpUrl, { method: 'POST', body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } });
    return { status: r.status, body: await r.json() };
  };
  for (const [body, status, code] of [
    ['{not json', 400, -32700],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', 400, -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"prompts/list"}', 200, -32601],
    ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"drop_site"}}', 200, -32602],
  ]) {
    const r = await post(body);
    assert.equal(r.status, status, body);
    assert.equal(r.body.jsonrpc, '2.0');
    assert.equal(r.body.error.code, code, JSON.stringify(r.body));
  }
  const stranger = await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', { origin: 'https://evil.example' });
  assert.equal(stranger.status, 403);
  const get = await fetch(mcpUrl, { headers: { accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
  await get.body?.cancel();
});
