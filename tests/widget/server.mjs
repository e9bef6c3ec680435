// A stand-in for the chat function (docs/architecture.md, "HTTP API") plus a static server
// for the widget, on 127.0.0.1 and a free port, so the browser tests need nothing else
// running. Same origin for page and endpoint, so CORS plays no part here (the real
// function's CORS has its own tests).
//
// What the fake chat answers depends on the question:
//   "XSS"   an answer (and sources) full of HTML/script/javascript: payloads
//   "SPOOF" links whose words name another site than they open, or hide text direction
//   "JSON"  a plain JSON response (no SSE), like a non-streaming server or proxy
//   "RATE"  429 + Retry-After: 2 the first time, a normal answer afterwards
//   "FAIL"  500 with the error envelope
//   "SLOW"  sources and one delta, then the stream stays open (never finishes)
//   "BREAK" sources and one delta, then the connection ends without `done`
//   "NOHIT"   no sources; `done` carries a mailto: handoff with the question prefilled
//   "SUGGEST" `done` carries two suggestions
//   "INVENT"  `done` says the grounding check found unsupported sentences
//   anything else: a streamed Partial FC answer, cut into 7-byte chunks (splitting lines,
//   events and UTF-8 characters) with CRLF line ends, as a hostile proxy might deliver it.
//
// `GET /chat/?challenge` answers {"bot_check": "off"}, or with startServer({ botCheck: bits })
// issues proof-of-work challenges like the chat function's BOT_CHECK=pow, and every POST then
// needs a solution of one it issued (else 403 bot_check_required / bot_check_failed). The
// first question containing "EXPIRE" is refused as bot_check_expired and its challenge
// forgotten, as when a visitor comes back after the challenge's lifetime.
import crypto from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const widgetDir = path.resolve(here, '../../widget');

export const SOURCES = [
  { n: 1, id: 'partial-fc', type: 'publication', title: 'Partial FC: Training 10 Million Identities on a Single Machine', url: 'https://arxiv.org/abs/2010.05222', score: 7.512 },
  { n: 2, id: 'insightface', type: 'page', title: 'InsightFace', url: 'https://github.com/deepinsight/insightface',
    section: ['Model zoo', 'Recognition'], section_url: 'https://github.com/deepinsight/insightface#recognition', score: 3.2 },
];

export const ANSWER = [
  '**Partial FC** 是一种训练超大规模人脸识别模型的方法 [1]。',
  '',
  '要点：',
  '- 每次只采样部分类别中心（*sampling*），显存占用大幅降低',
  '- 在单机上训练 1000 万个身份',
  '',
  '代码见 `insightface` 仓库 [2]：',
  '```',
  'python train.py --partial-fc 0.1',
  '```',
  '更多信息：https://arxiv.org/abs/2010.05222',
].join('\n');

export const XSS_ANSWER = [
  'Payloads: <img src=x onerror="window.__xss=1;alert(1)"> and <script>window.__xss=2</script>',
  '[click me](javascript:alert(1)) [also](JaVaScRiPt:alert(2)) [data](data:text/html,<script>alert(3)</script>)',
  '<a href="javascript:alert(4)">raw anchor</a> **<b onmouseover=alert(5)>bold</b>** `<svg onload=alert(6)>`',
  '- [ok link](https://example.com/safe) [1]',
].join('\n');

export const SPOOF_ANSWER = [
  'Paper: [https://arxiv.org/abs/2010.05222](https://evil.example/phish).',
  'Bank: [www.bank.example](https://evil.example/login) and [arxiv.org](https://arxiv.org/abs/1).',
  'Reversed: [\u202egnp.exe](https://evil.example/x) and https://evil.example/\u202etxt.exe',
  'Plain: [the paper](https://arxiv.org/abs/2).',
].join('\n');

const XSS_SOURCES = [
  { n: 1, id: 'x', type: 'project', title: '<img src=x onerror="window.__xss=3">', url: 'javascript:alert(7)', score: 1,
    section: ['<img src=x onerror="window.__xss=4">'], section_url: 'javascript:alert(8)' },
];

const sse = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

// Every answer carries a request id and a feedback token the server checks (`tok-<id>-<sid>`)
// and grounding figures: faithful unless the question says "INVENT".
const grounding = (q) => ({ sentences: 4, cited: 2, uncited_sentences: 2,
  unsupported_sentences: q.includes('INVENT') ? 2 : 0, invalid_citations: 0 });
let answers = 0;
function extra(q, session_id) {
  const request_id = `req-${++answers}`;
  const out = { request_id, feedback_token: `tok-${request_id}-${session_id}`, grounding: grounding(q) };
  if (q.includes('NOHIT')) {
    out.handoff = { url: `mailto:owner@example.com?subject=Question&body=${encodeURIComponent(q)}` };
  }
  if (q.includes('SUGGEST')) {
    out.suggestions = [
      { id: 'arcface', title: 'ArcFace', url: 'https://arxiv.org/abs/1801.07698', question: 'What is ArcFace?' },
      { id: 'insightface', title: 'InsightFace', question: 'What is InsightFace?' },
    ];
  }
  return out;
}

const done = (session_id, more = {}) => sse('done', {
  session_id, request_id: 'req-1', model: 'fake', offline: false,
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
  timings_ms: { retrieve: 1, generate: 2, total: 3 }, ...more,
});

// Splits text into delta events a few characters long, like a model's tokens.
function deltas(text, size = 6) {
  const chars = [...text];
  let out = '';
  for (let i = 0; i < chars.length; i += size) out += sse('delta', { text: chars.slice(i, i + size).join('') });
  return out;
}

// Escapes a value for a double-quoted HTML attribute.
const attr = (v) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Leading zero bits of a hash.
function zeroBits(hash) {
  let z = 0;
  for (const b of hash) {
    if (b) return z + Math.clz32(b) - 24;
    z += 8;
  }
  return z;
}

const json403 = (res, code) => {
  res.writeHead(403, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message: `${code} (test server)`, request_id: 'req-403' } }));
};

export async function startServer({ botCheck = 0 } = {}) {
  const requests = [];           // every chat request body, for assertions
  const challenges = [];         // every challenge issued
  const issued = new Set();      // challenges whose solutions are accepted
  const open = new Set();        // hanging responses, ended on close()
  const feedback = [];           // every accepted rating
  let rateHits = 0;
  let sessions = 0;
  let expired = false;

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/chat/' && req.method === 'GET' && url.searchParams.has('challenge')) {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      if (!botCheck) return res.end(JSON.stringify({ bot_check: 'off' }));
      const expires_at = Math.floor(Date.now() / 1000) + 300;
      const challenge = `pow1.${botCheck}.${expires_at}.${crypto.randomBytes(16).toString('hex')}.${'0'.repeat(32)}`;
      challenges.push(challenge);
      issued.add(challenge);
      return res.end(JSON.stringify({ bot_check: 'pow', challenge, difficulty: botCheck, expires_at }));
    }
    if (url.pathname === '/chat/' && req.method === 'POST') {
      let body = '';
      for await (const c of req) body += c;
      const json = JSON.parse(body);
      // A rating: {"feedback": {request_id, session_id, token, rating, comment?}}.
      if (json.feedback) {
        const f = json.feedback;
        const ok = f.token === `tok-${f.request_id}-${f.session_id}` && ['up', 'down'].includes(f.rating);
        if (ok) feedback.push(f);
        res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(ok ? { request_id: f.request_id, rating: f.rating, comment: !!f.comment }
          : { error: { code: 'forbidden', message: 'bad token', request_id: 'req-fb' } }));
      }
      requests.push(json);
      const msgs = json.messages || [];
      const q = json.message || (msgs.length ? msgs[msgs.length - 1].content : '');
      const sid = json.session_id || `sess-${++sessions}`;
      if (botCheck) {
        const proof = json.proof;
        if (typeof proof !== 'string') return json403(res, 'bot_check_required');
        const challenge = proof.slice(0, proof.lastIndexOf(':'));
        const work = zeroBits(crypto.createHash('sha256').update(proof).digest());
        if (!issued.has(challenge) || work < botCheck) return json403(res, 'bot_check_failed');
        if (q.includes('EXPIRE') && !expired) {
          expired = true;
          issued.delete(challenge);
          return json403(res, 'bot_check_expired');
        }
      }

      if (q.includes('FAIL')) {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { code: 'internal', message: 'internal error', request_id: 'req-500' } }));
      }
      if (q.includes('RATE') && rateHits++ === 0) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        return res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', request_id: 'req-429' } }));
      }
      if (q.includes('JSON')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ reply: 'A **whole** answer from JSON [1].', sources: SOURCES, session_id: sid, ...extra(q, sid) }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      if (q.includes('NOHIT')) {
        return res.end(sse('sources', { sources: [], session_id: sid }) +
          deltas('The pages of this site say nothing about that.') + done(sid, extra(q, sid)));
      }
      if (q.includes('SPOOF')) {
        return res.end(sse('sources', { sources: [], session_id: sid }) + deltas(SPOOF_ANSWER, 40) + done(sid));
      }
      if (q.includes('XSS')) {
        return res.end(sse('sources', { sources: XSS_SOURCES, session_id: sid }) + deltas(XSS_ANSWER, 40) + done(sid));
      }
      if (q.includes('SLOW') || q.includes('BREAK')) {
        res.write(sse('sources', { sources: SOURCES, session_id: sid }) + sse('delta', { text: 'Partial answer before the cut' }));
        if (q.includes('BREAK')) { await sleep(100); return res.end(); }
        open.add(res);
        req.on('close', () => open.delete(res));
        return;
      }
      // The normal answer: CRLF line ends, cut into 7-byte chunks, 15 ms apart.
      const bytes = Buffer.from((sse('sources', { sources: SOURCES, session_id: sid }) + deltas(ANSWER) +
        done(sid, extra(q, sid))).replace(/\n/g, '\r\n'));
      for (let i = 0; i < bytes.length; i += 7) {
        if (res.destroyed) return;
        res.write(bytes.subarray(i, i + 7));
        await sleep(i < 300 ? 15 : 2);
      }
      return res.end();
    }

    // Health: `contact_url` when the endpoint was given as /chat/?contact.
    if (url.pathname === '/chat/' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ status: 'ok', ...(url.searchParams.has('contact') ? { contact_url: 'mailto:help@example.com' } : {}) }));
    }

    // Static: the test page at / (with chat-widget.min.js for `?min` or when WIDGET_MIN is
    // set, which runs every test against it) and the widget's files.
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Widget test page</title>
<style>button{background:hotpink!important} *{font-size:30px}</style></head>
<body><main><h1>Host page</h1><p><a href="#top">A host link</a></p></main>
<script src="/widget/chat-widget${url.searchParams.has('min') || process.env.WIDGET_MIN ? '.min' : ''}.js" data-endpoint="${attr(url.searchParams.get('endpoint') || '/chat/')}"
 ${Object.entries({ lang: 'en', strings: '', contact: '', ...Object.fromEntries(url.searchParams) })
    .filter(([k, v]) => v && ['lang', 'strings', 'contact'].includes(k)).map(([k, v]) => `data-${k}="${attr(v)}"`).join(' ')}
 ${url.searchParams.has('title') ? '' : 'data-title="Test assistant"'} data-starters="请介绍一下 Partial FC|What is ArcFace?" defer></script></body></html>`);
    }
    const file = path.join(widgetDir, path.basename(url.pathname));
    if (url.pathname.startsWith('/widget/') && fs.existsSync(file)) {
      const type = file.endsWith('.js') ? 'text/javascript' : 'text/html';
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8` });
      return res.end(fs.readFileSync(file));
    }
    res.writeHead(404).end();
  });

  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    requests,
    challenges,
    close: () => {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
    feedback,
  };
}
