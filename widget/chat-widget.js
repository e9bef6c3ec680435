/*!
 * chat-widget.js — embeddable chat for the RAG chat function (docs/architecture.md, "HTTP API").
 * One file, no dependencies, no keys:
 *   <script src="chat-widget.js" data-endpoint="https://…/chat/" defer></script>
 * chat-widget.min.js is this file minified (tests/widget/minify.mjs), for sites to host.
 * Optional: data-title, data-greeting, data-starters ("a|b|c"), data-lang (en, zh-CN, zh-TW,
 * ja, ko, es, fr, de), data-strings (JSON of UI strings), data-contact (URL or mailto:),
 * data-position (left|right), data-primary, data-primary-text, data-background, data-text
 * (colours; the same CSS custom properties --cw-* can also be set on the host element).
 *
 * Safety rule for this file: text from the model or the knowledge base only ever reaches
 * the page through textContent / createTextNode, and links through safeUrl(); innerHTML is
 * used once, for the static template below, which contains no variable text.
 */
(function () {
  'use strict';

  var script = document.currentScript || document.querySelector('script[data-endpoint]');
  if (!script) return;
  var cfg = script.dataset;
  var endpoint = cfg.endpoint;
  if (!endpoint) { console.warn('chat-widget: data-endpoint is required'); return; }
  // A second copy of the script on the page must not add a second launcher.
  if (document.querySelector('rag-chat-widget')) return;

  // ---------------------------------------------------------------- UI strings
  // One '|'-separated string per language, in the order of KEYS (compact: the file has a
  // size budget). A language missing a key falls back to English for it.
  var KEYS = ('title open close send stop input placeholder clear retry sources you bot greeting ' +
    'thinking stopped received interrupted offline network server rate rateNow cut source starters up down comment thanks ungrounded contact').split(' ');
  var LANGS = {
    en: "Ask us|Open chat|Close chat|Send|Stop|Your question|Ask a question…|" +
      "New conversation|Retry|Sources|You|Assistant|" +
      "Hi! Ask me anything about this site.|Thinking…|Stopped.|New answer: |" +
      "This reply was interrupted before it finished.|" +
      "You appear to be offline. Check your connection, then retry.|" +
      "Could not reach the chat service. Please retry.|" +
      "The chat service had a problem. Please retry in a moment.|" +
      "Too many requests. Please wait {s} s before retrying.|You can retry now.|" +
      "The answer was cut off. Please retry.|Source|Suggested questions|Helpful|" +
      "Not helpful|What was missing? (optional)|Thanks for your feedback!|" +
      "Parts of this answer were not found in the site's pages.|Contact the owner",
    'zh-CN': '智能问答|打开聊天|关闭聊天|发送|停止|您的问题|请输入问题…|新对话|重试|参考来源|我|助手|您好！有什么可以帮您？|思考中…|已停止。|新回答：|' +
      '回答被中断。|您似乎已离线，请检查网络后重试。|无法连接，请重试。|服务出错，请稍后重试。|请求过多，请 {s} 秒后重试。|现在可以重试了。|' +
      '回答被截断，请重试。|来源|推荐问题|有帮助|没帮助|缺少了什么？（可选）|感谢反馈！|部分内容未在本站页面中找到。|联系站长',
    'zh-TW': '智慧問答|開啟聊天|關閉聊天|傳送|停止|您的問題|請輸入問題…|新對話|重試|參考來源|我|助理|您好！有什麼可以幫您？|思考中…|已停止。|新回答：|' +
      '回答被中斷。|您似乎已離線，請檢查網路後重試。|無法連線，請重試。|服務出錯，請稍後重試。|請求過多，請 {s} 秒後重試。|現在可以重試了。|' +
      '回答被截斷，請重試。|來源|推薦問題|有幫助|沒幫助|缺少了什麼？（選填）|感謝回饋！|部分內容未在本站頁面中找到。|聯絡站長',
    ja: 'チャットで質問|チャットを開く|チャットを閉じる|送信|停止|質問|質問を入力…|新しい会話|再試行|出典|あなた|アシスタント|' +
      'こんにちは！何でも聞いてください。|考え中…|停止しました。|新しい回答：|回答が中断されました。|オフラインです。接続を確認してください。|' +
      '接続できません。再試行してください。|エラーが発生しました。再試行してください。|{s} 秒後に再試行してください。|再試行できます。|回答が途切れました。|' +
      '出典|おすすめの質問|役に立った|役に立たなかった|不足していた点は？（任意）|ありがとうございます！|一部はサイト内で確認できませんでした。|管理者に連絡',
    ko: '질문하기|채팅 열기|채팅 닫기|보내기|중지|질문|질문을 입력하세요…|새 대화|다시 시도|출처|나|도우미|안녕하세요! 무엇이든 물어보세요.|' +
      '생각 중…|중지됨.|새 답변: |답변이 중단되었습니다.|오프라인입니다. 연결을 확인하세요.|연결할 수 없습니다. 다시 시도하세요.|' +
      '오류가 발생했습니다. 다시 시도하세요.|{s}초 후에 다시 시도하세요.|이제 다시 시도할 수 있습니다.|답변이 끊겼습니다.|출처|추천 질문|' +
      '도움이 됨|도움이 안 됨|부족한 점은? (선택)|감사합니다!|일부 내용은 사이트에서 찾을 수 없습니다.|운영자에게 문의',
    es: 'Pregúntanos|Abrir chat|Cerrar chat|Enviar|Detener|Tu pregunta|' +
      'Escribe tu pregunta…|Nueva conversación|Reintentar|Fuentes|Tú|Asistente|' +
      '¡Hola! ¿En qué puedo ayudarte?|Pensando…|Detenido.|Nueva respuesta: |' +
      'Respuesta interrumpida.|Sin conexión. Revisa tu red y reintenta.|' +
      'No se pudo conectar. Reintenta.|Error del servicio. Reintenta en un momento.|' +
      'Demasiadas solicitudes. Espera {s} s.|Ya puedes reintentar.|' +
      'Respuesta cortada. Reintenta.|Fuente|Preguntas sugeridas|Útil|No útil|' +
      '¿Qué faltó? (opcional)|¡Gracias!|' +
      'Parte de esto no está en las páginas del sitio.|Contactar al responsable',
    fr: "Une question ?|Ouvrir le chat|Fermer le chat|Envoyer|Arrêter|Votre question|" +
      "Posez une question…|Nouvelle conversation|Réessayer|Sources|Vous|Assistant|" +
      "Bonjour ! Comment puis-je aider ?|Réflexion…|Arrêté.|Nouvelle réponse : |" +
      "Réponse interrompue.|Hors ligne. Vérifiez la connexion.|" +
      "Service injoignable. Réessayez.|Erreur du service. Réessayez bientôt.|" +
      "Trop de requêtes. Attendez {s} s.|Vous pouvez réessayer.|" +
      "Réponse coupée. Réessayez.|Source|Questions suggérées|Utile|Pas utile|" +
      "Que manquait-il ? (facultatif)|Merci !|" +
      "Une partie n'est pas dans les pages du site.|Contacter le responsable",
    de: 'Fragen Sie uns|Chat öffnen|Chat schließen|Senden|Stopp|Ihre Frage|' +
      'Frage eingeben…|Neues Gespräch|Erneut versuchen|Quellen|Sie|Assistent|' +
      'Hallo! Wie kann ich helfen?|Denke nach…|Angehalten.|Neue Antwort: |' +
      'Antwort unterbrochen.|Offline. Bitte Verbindung prüfen.|' +
      'Dienst nicht erreichbar. Bitte erneut versuchen.|' +
      'Dienstfehler. Bitte gleich erneut versuchen.|' +
      'Zu viele Anfragen. Bitte {s} s warten.|Sie können es erneut versuchen.|' +
      'Antwort abgeschnitten.|Quelle|Vorgeschlagene Fragen|Hilfreich|Nicht hilfreich|' +
      'Was fehlte? (optional)|Danke!|Teile davon stehen nicht auf den Seiten.|' +
      'Betreiber kontaktieren'
  };
  // data-lang first, then the browser's languages in order; Chinese for Taiwan, Hong Kong,
  // Macau or in Traditional script gets zh-TW, any other Chinese zh-CN.
  var lang = [cfg.lang].concat(navigator.languages || [navigator.language]).reduce(function (found, t) {
    t = String(t || '').toLowerCase();
    if (found || !t) return found;
    if (!t.indexOf('zh')) return /hant|-tw|-hk|-mo/.test(t) ? 'zh-TW' : 'zh-CN';
    t = t.split('-')[0];
    return LANGS[t] ? t : '';
  }, '') || 'en';
  var T = {};
  [LANGS.en, LANGS[lang]].forEach(function (l) {
    l.split('|').forEach(function (s, i) { T[KEYS[i]] = s; });
  });
  // The owner's wording wins: data-strings='{"title": "…"}' (JSON; unknown keys are ignored).
  try {
    var own = JSON.parse(cfg.strings || '{}');
    KEYS.forEach(function (k) { if (typeof own[k] == 'string') T[k] = own[k]; });
  } catch (e) { console.warn('chat-widget: data-strings is not valid JSON'); }
  var title = cfg.title || T.title;
  var greeting = cfg.greeting != null ? cfg.greeting : T.greeting;
  var starters = (cfg.starters || '').split('|').map(function (s) { return s.trim(); }).filter(Boolean);

  // ---------------------------------------------------------------- state
  // One conversation per endpoint, kept across reloads: {session_id, messages:[…]}.
  // A message: {role:'user'|'assistant', text, sources?, status?:'pending'|'done'|
  // 'stopped'|'interrupted'|'error', error?} and from `done`: req, sid, fb (feedback token),
  // rating, thanked, weak (grounding flagged), sugg (suggestions), handoff (URL).
  var STORE_KEY = 'chat-widget:' + endpoint;
  var OPEN_KEY = STORE_KEY + ':open';
  var MAX_STORED = 60;      // messages kept in localStorage
  var MAX_CONTEXT = 12;     // turns sent as context
  var state = load();
  var controller = null;    // AbortController of the request in flight
  var retryTimer = null;
  // Leaving the page aborts the fetch; that is not a failure to report but an interruption,
  // which load() shows on the next visit, so the reply stays "pending" in storage.
  var leaving = false;
  addEventListener('pagehide', function () { leaving = true; save(); });
  addEventListener('pageshow', function () { leaving = false; });

  function load() {
    try {
      var s = JSON.parse(localStorage.getItem(STORE_KEY) || 'null');
      if (s && Array.isArray(s.messages)) {
        // A reply still "pending" in storage was cut by a reload or a closed tab: it is kept
        // (partial text and all) and marked, rather than silently lost or left spinning.
        s.messages.forEach(function (m) { if (m.status === 'pending') m.status = 'interrupted'; });
        return s;
      }
    } catch (e) { /* storage blocked or corrupt: start fresh */ }
    return { session_id: null, messages: [] };
  }
  // Streaming saves at most twice a second: serialising the whole history on every piece
  // would cost more than rendering it.
  var saveTimer = 0;
  function saveSoon() {
    if (!saveTimer) saveTimer = setTimeout(function () { saveTimer = 0; save(); }, 500);
  }
  function save() {
    clearTimeout(saveTimer); saveTimer = 0;
    try {
      state.messages = state.messages.slice(-MAX_STORED);
      localStorage.setItem(STORE_KEY, JSON.stringify(state));
    } catch (e) { /* quota or privacy mode: the chat still works, just not across reloads */ }
  }

  // ---------------------------------------------------------------- DOM
  // A custom element name the host's CSS is unlikely to target; its shadow root keeps the
  // two stylesheets apart in both directions. Open mode so tests and tools can inspect it.
  var host = document.createElement('rag-chat-widget');
  var root = host.attachShadow({ mode: 'open' });
  var side = cfg.position === 'left' ? 'left' : 'right';
  [['primary', '--cw-primary'], ['primaryText', '--cw-primary-text'],
   ['background', '--cw-bg'], ['text', '--cw-text']].forEach(function (p) {
    if (cfg[p[0]]) host.style.setProperty(p[1], cfg[p[0]]);
  });

  // Colours default to pairs with at least 4.5:1 contrast (WCAG AA for normal text).
  var CSS = [
    ':host{all:initial;position:fixed;z-index:2147483000;bottom:0;' + side + ':0}',
    // Inherited properties (font, colour, spacing) set by the host page on the host element
    // would flow into the shadow tree; .wrap resets them all, then sets its own.
    '.wrap{all:initial;display:block;',
    'font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"PingFang SC","Microsoft YaHei","Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif;',
    '--p:var(--cw-primary,#1d4ed8);--pt:var(--cw-primary-text,#fff);--bg:var(--cw-bg,#fff);',
    '--tx:var(--cw-text,#1f2937);--mu:#4b5563;--bd:#d1d5db;--ab:#f3f4f6}',
    '*{box-sizing:border-box}',
    'button,textarea{font:inherit;color:inherit}',
    ':focus-visible{outline:3px solid var(--p);outline-offset:2px}',
    '.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
    '.launch{position:fixed;bottom:20px;' + side + ':20px;width:56px;height:56px;border-radius:50%;border:0;',
    'background:var(--p);color:var(--pt);cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.25);',
    'display:flex;align-items:center;justify-content:center;transition:transform .15s}',
    '.launch:hover{transform:scale(1.06)}',
    '.launch svg{width:28px;height:28px;fill:currentColor}',
    '.panel{position:fixed;bottom:88px;' + side + ':20px;width:380px;max-width:calc(100vw - 40px);',
    'height:min(600px,calc(100vh - 110px));background:var(--bg);color:var(--tx);border-radius:14px;',
    'box-shadow:0 10px 40px rgba(0,0,0,.28);display:flex;flex-direction:column;overflow:hidden;',
    'transition:opacity .15s,transform .15s}',
    '.panel[hidden]{display:none}',
    'header{display:flex;align-items:center;gap:6px;padding:10px 12px;background:var(--p);color:var(--pt)}',
    'header h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}',
    '.hb{background:transparent;border:1px solid transparent;color:var(--pt);border-radius:6px;padding:4px 8px;cursor:pointer;font-size:13px}',
    '.hb:hover{border-color:currentColor}',
    '.hb.x{font-size:20px;line-height:1;padding:2px 8px}',
    '.log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:10px}',
    '.msg{max-width:88%;padding:8px 12px;border-radius:12px;overflow-wrap:anywhere}',
    '.user{align-self:flex-end;background:var(--p);color:var(--pt);white-space:pre-wrap}',
    '.assistant{align-self:flex-start;background:var(--ab);color:#111827}',
    '.assistant a{color:#1e40af}',
    '.msg p{margin:0 0 8px}.msg p:last-child{margin-bottom:0}',
    '.msg ul,.msg ol{margin:0 0 8px;padding-left:22px}',
    '.msg code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#e5e7eb;padding:1px 4px;border-radius:4px}',
    '.msg pre{background:#111827;color:#f9fafb;padding:8px;border-radius:6px;overflow-x:auto;margin:0 0 8px}',
    '.msg pre code{background:none;padding:0;color:inherit}',
    '.cite{font-size:12px;vertical-align:super;text-decoration:none;margin:0 1px}',
    '.src{margin-top:8px;border-top:1px solid var(--bd);padding-top:6px;font-size:13px}',
    '.src h3{font-size:13px;margin:0 0 4px;color:var(--mu)}',
    '.src ol{margin:0;padding-left:22px}',
    '.src .sec{color:var(--mu)}',
    '.note{font-size:13px;color:var(--mu);margin-top:6px;font-style:italic}',
    '.err{background:#fef2f2;color:#991b1b;border:1px solid #fecaca}',
    '.err .note{color:#991b1b}',
    '.rb{margin-top:6px;background:var(--bg);border:1px solid currentColor;border-radius:6px;padding:2px 10px;cursor:pointer;font-size:13px}',
    '.rb:disabled{opacity:.6;cursor:not-allowed}',
    '.dots::after{content:"…";animation:blink 1s steps(2) infinite}',
    '@keyframes blink{50%{opacity:0}}',
    '.starters{display:flex;flex-wrap:wrap;gap:6px;margin:0;padding:0;list-style:none}',
    '.starters button{background:var(--bg);color:#1e40af;border:1px solid #93c5fd;border-radius:16px;padding:4px 10px;cursor:pointer;font-size:13px;text-align:left}',
    '.fb{display:flex;flex-wrap:wrap;gap:4px;align-items:center;margin-top:6px;font-size:13px;color:var(--mu)}',
    '.fb .fb{flex-basis:100%;flex-wrap:nowrap;margin:0}',
    '.fb button{background:var(--bg);border:1px solid var(--bd);border-radius:6px;padding:2px 6px;cursor:pointer}',
    '.fb svg{display:block;width:16px;height:16px;fill:currentColor}',
    '.fb [aria-pressed=true]{border-color:var(--p);background:#dbeafe}',
    '.fb input{flex:1;min-width:0;border:1px solid #6b7280;border-radius:6px;padding:2px 6px;font:inherit}',
    '.ct{padding:0 12px 4px;text-align:right;font-size:13px}.ct a{color:#1e40af}',
    'form{display:flex;gap:8px;padding:10px;border-top:1px solid var(--bd);align-items:flex-end}',
    'textarea{flex:1;resize:none;border:1px solid #6b7280;border-radius:8px;padding:8px;max-height:120px;min-height:40px;background:var(--bg);color:var(--tx)}',
    '.go{background:var(--p);color:var(--pt);border:0;border-radius:8px;padding:9px 14px;cursor:pointer;font-weight:600}',
    '.go:disabled{opacity:.6;cursor:not-allowed}',
    // Narrow screens: the panel takes the whole viewport, the launcher hides behind it.
    '@media (max-width:520px){.panel{inset:0;width:100%;max-width:none;height:100%;border-radius:0}',
    '.open .launch{display:none}.msg{max-width:94%}',
    // 16px inputs keep iOS Safari from zooming the page on focus.
    'textarea{font-size:16px}}',
    '@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}'
  ].join('');

  // Static template only: every variable string is set with textContent afterwards.
  root.innerHTML =
    '<style>' + CSS + '</style><div class="wrap">' +
    '<button class="launch" type="button" aria-expanded="false" aria-controls="cw-panel">' +
    '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H8l-5 4V5a2 2 0 0 1 1-2z"/></svg></button>' +
    '<section class="panel" id="cw-panel" role="dialog" aria-labelledby="cw-title" hidden>' +
    '<header><h2 id="cw-title"></h2><button class="hb clear" type="button"></button>' +
    '<button class="hb x" type="button">×</button></header>' +
    '<div class="log" role="log" aria-live="off" tabindex="0"></div>' +
    '<div class="sr live" aria-live="polite" aria-atomic="true"></div><div class="ct" hidden></div>' +
    '<form><textarea rows="1" maxlength="4000"></textarea>' +
    '<button class="go" type="submit"></button></form></section></div>';

  var $ = function (sel) { return root.querySelector(sel); };
  var wrap = $('.wrap'), launcher = $('.launch'), panel = $('.panel'), log = $('.log'),
      live = $('.live'), form = $('form'), input = $('textarea'), goBtn = $('.go'),
      closeBtn = $('.x'), clearBtn = $('.clear');
  $('#cw-title').textContent = title;
  launcher.setAttribute('aria-label', T.open);
  closeBtn.setAttribute('aria-label', T.close);
  clearBtn.textContent = T.clear;
  log.setAttribute('aria-label', title);
  input.setAttribute('aria-label', T.input);
  input.placeholder = T.placeholder;
  goBtn.textContent = T.send;
  wrap.lang = lang;

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text != null) n.textContent = text;
    return n;
  }

  // ---------------------------------------------------------------- safe Markdown
  // Only http(s) URLs become links; anything else (javascript:, data:, relative) is text.
  // `mail` also lets mailto: through (the owner's contact, never the model's links).
  function safeUrl(u, mail) {
    try {
      var url = new URL(String(u).trim());
      return /^https?:$/.test(url.protocol) || mail && url.protocol === 'mailto:' ? url.href : null;
    } catch (e) { return null; }
  }
  // Characters that reorder or hide text: a link's words holding one may read as another
  // name than the one they spell.
  var HIDDEN = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;
  function hostOf(href) { return new URL(href).host; }
  function bareHost(h) { return h.toLowerCase().replace(/^www\./, ''); }
  // True when a link's words would mislead about where it goes: they hide their direction,
  // or they read as an address (a URL or a domain) on another host than the target's.
  function misleading(words, href) {
    if (HIDDEN.test(words)) return true;
    var w = words.trim();
    if (!/^(https?:\/\/)?[^\s\/]+\.[a-z]{2,}(?:[\/?#:]\S*)?$/i.test(w)) return false;
    try {
      return bareHost(new URL(/^https?:\/\//i.test(w) ? w : 'https://' + w).host) !== bareHost(hostOf(href));
    } catch (e) { return true; }
  }
  function link(href, text) {
    var a = el('a', null, text);
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    return a;
  }

  // Inline syntax, earliest match first: `code`, [text](url), **bold**, __bold__, *italic*,
  // _italic_, [n] citations, bare http(s) URLs.
  var INLINE = /(`+)([\s\S]+?)\1|\[([^\]\n]+)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|\*\*(?=\S)([\s\S]+?)\*\*|(?<![\w])__(?=\S)([\s\S]+?)__(?![\w])|\*(?=[^\s*])([^*\n]+?)\*|(?<![\w])_(?=[^\s_])([^_\n]+?)_(?![\w])|\[(\d{1,3})\]|(https?:\/\/[^\s<>"'`\]\[()（）]*[^\s<>"'`\]\[()（）.,;:!?。，；：！？、])/g;

  function inline(text, parent, sources) {
    var last = 0, m;
    INLINE.lastIndex = 0;
    // The regex is global and recursion reuses it, so collect matches before recursing.
    var found = [];
    while ((m = INLINE.exec(text))) { found.push(m); if (!m[0]) INLINE.lastIndex++; }
    found.forEach(function (m) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      last = m.index + m[0].length;
      var n;
      if (m[2] != null) {
        parent.appendChild(el('code', null, m[2]));
      } else if (m[3] != null) {
        var href = safeUrl(m[4]);
        if (href && misleading(m[3], href)) parent.appendChild(link(href, hostOf(href)));
        else if (href) { n = link(href, ''); inline(m[3], n, sources); parent.appendChild(n); }
        else inline(m[3], parent, sources);   // unsafe target: keep the words, drop the link
      } else if (m[5] != null || m[6] != null) {
        n = el('strong'); inline(m[5] != null ? m[5] : m[6], n, sources); parent.appendChild(n);
      } else if (m[7] != null || m[8] != null) {
        n = el('em'); inline(m[7] != null ? m[7] : m[8], n, sources); parent.appendChild(n);
      } else if (m[9] != null) {
        parent.appendChild(citation(+m[9], m[0], sources));
      } else if (m[10] != null) {
        var u = safeUrl(m[10]);
        if (u && HIDDEN.test(m[10])) parent.appendChild(link(u, hostOf(u)));
        else parent.appendChild(u ? link(u, m[10]) : document.createTextNode(m[10]));
      }
    });
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // Where a source links: the section of a long page its passage is from, else the page.
  function sourceUrl(s) {
    return (s.section_url && safeUrl(s.section_url)) || (s.url && safeUrl(s.url));
  }

  // A [n] marker links to source n (its URL) when the sources event listed it.
  function citation(n, raw, sources) {
    var s = (sources || []).filter(function (x) { return x.n === n; })[0];
    var href = s && sourceUrl(s);
    if (!s) return document.createTextNode(raw);
    var a = href ? link(href, raw) : el('span', null, raw);
    a.className = 'cite';
    a.title = s.title || '';
    a.setAttribute('aria-label', T.source + ' ' + n + ': ' + (s.title || ''));
    return a;
  }

  // Blocks: ``` fences, - / * / + / 1. lists, # headings (shown bold), paragraphs with
  // single line breaks kept.
  function markdown(src, sources) {
    var frag = document.createDocumentFragment();
    var lines = String(src).replace(/\r\n?/g, '\n').split('\n');
    var para = [], list = null, i = 0;
    function flushPara() {
      if (!para.length) return;
      var p = el('p');
      para.forEach(function (l, k) { if (k) p.appendChild(el('br')); inline(l, p, sources); });
      frag.appendChild(p);
      para = [];
    }
    function flushList() { list = null; }
    for (; i < lines.length; i++) {
      var line = lines[i], m;
      if ((m = /^\s*(```|~~~)/.exec(line))) {
        flushPara(); flushList();
        var code = [];
        // An unclosed fence (still streaming) runs to the end: the text shows as code already.
        for (i++; i < lines.length && lines[i].trim().indexOf(m[1]) !== 0; i++) code.push(lines[i]);
        var pre = el('pre');
        pre.appendChild(el('code', null, code.join('\n')));
        frag.appendChild(pre);
      } else if ((m = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/.exec(line))) {
        flushPara();
        var tag = m[1] ? 'ul' : 'ol';
        if (!list || list.tagName.toLowerCase() !== tag) {
          list = el(tag);
          if (tag === 'ol' && +m[2] !== 1) list.start = +m[2];
          frag.appendChild(list);
        }
        var li = el('li');
        inline(m[3], li, sources);
        list.appendChild(li);
      } else if (!line.trim()) {
        flushPara(); flushList();
      } else if ((m = /^\s*#{1,6}\s+(.*)$/.exec(line))) {
        flushPara(); flushList();
        var h = el('p'), b = el('strong');
        inline(m[1], b, sources); h.appendChild(b); frag.appendChild(h);
      } else if (list && /^\s{2,}\S/.test(line)) {
        // An indented continuation line belongs to the last list item.
        list.lastChild.appendChild(document.createTextNode(' '));
        inline(line.trim(), list.lastChild, sources);
      } else {
        flushList();
        para.push(line);
      }
    }
    flushPara();
    return frag;
  }

  // ---------------------------------------------------------------- rendering
  function renderAll() {
    log.textContent = '';
    if (greeting) log.appendChild(bubble({ role: 'assistant', text: greeting, status: 'done' }));
    if (!state.messages.length && starters.length) log.appendChild(chips(starters));
    state.messages.forEach(function (m) { log.appendChild(m.node = bubble(m)); });
    scrollDown();
    contactLink();
  }

  // Questions to click: the owner's starters, or the suggestions after an answer.
  function chips(qs) {
    var ul = el('ul', 'starters');
    ul.setAttribute('aria-label', T.starters);
    qs.forEach(function (q) {
      var li = el('li'), b = el('button', null, q);
      b.type = 'button';
      b.addEventListener('click', function () { send(q); });
      li.appendChild(b); ul.appendChild(li);
    });
    return ul;
  }

  function bubble(m) {
    var div = el('div', 'msg ' + m.role);
    fill(div, m);
    return div;
  }

  // (Re)builds a message's content; called on every streamed piece (batched per frame).
  function fill(div, m) {
    div.textContent = '';
    if (m.status) div.dataset.status = m.status;   // styling hook; tests wait on it too
    var who = el('span', 'sr', (m.role === 'user' ? T.you : T.bot) + ': ');
    div.appendChild(who);
    if (m.role === 'user') { div.appendChild(document.createTextNode(m.text)); return; }
    div.classList.toggle('err', m.status === 'error');
    if (m.text) div.appendChild(markdown(m.text, m.sources));
    if (m.status === 'pending' && !m.text) div.appendChild(el('span', 'dots', T.thinking.replace('…', '')));
    if (m.sources && m.sources.length && m.text) {
      var box = el('div', 'src'), ol = el('ol');
      box.appendChild(el('h3', null, T.sources));
      m.sources.forEach(function (s) {
        var li = el('li'), href = sourceUrl(s);
        li.value = s.n;
        li.appendChild(href ? link(href, s.title || href) : document.createTextNode(s.title || s.id || ''));
        // A passage of a long page names the section it is from (its innermost heading).
        var sec = Array.isArray(s.section) && s.section[s.section.length - 1];
        if (sec) li.appendChild(el('span', 'sec', ' › ' + sec));
        ol.appendChild(li);
      });
      box.appendChild(ol);
      div.appendChild(box);
    }
    var note = m.status === 'interrupted' ? T.interrupted : m.status === 'stopped' ? T.stopped :
      m.status === 'error' ? m.error : '';
    if (note) div.appendChild(el('div', 'note', note));
    if (m.status === 'done') extras(div, m);
    if (m.status === 'interrupted' || m.status === 'error') {
      var rb = el('button', 'rb', T.retry);
      rb.type = 'button';
      if (m.retryAt && m.retryAt > Date.now()) { rb.disabled = true; countdown(rb, m); }
      rb.addEventListener('click', function () { retry(m); });
      div.appendChild(rb);
    }
  }

  // Keeps the 429 message's wait up to date and enables Retry when it is over.
  function countdown(rb, m) {
    clearInterval(retryTimer);
    retryTimer = setInterval(function () {
      var left = Math.ceil((m.retryAt - Date.now()) / 1000);
      var note = rb.parentNode && rb.parentNode.querySelector('.note');
      if (left <= 0) {
        clearInterval(retryTimer);
        rb.disabled = false;
        m.error = T.rateNow;
        if (note) note.textContent = m.error;
        return;
      }
      m.error = T.rate.replace('{s}', left);
      if (note) note.textContent = m.error;
    }, 1000);
  }

  var frame = 0;
  function update(m) {
    // Streaming can deliver many pieces per frame; render once per frame.
    if (frame) return;
    frame = requestAnimationFrame(function () {
      frame = 0;
      if (m.node) fill(m.node, m);
      scrollDown();
    });
  }
  function finish(m) {
    if (frame) { cancelAnimationFrame(frame); frame = 0; }
    if (m.node) fill(m.node, m);
    scrollDown();
    save();
  }
  function scrollDown() { log.scrollTop = log.scrollHeight; }
  // The visually hidden polite region announces whole answers and errors once, instead of
  // every streamed piece.
  function announce(text) {
    live.textContent = '';
    setTimeout(function () { live.textContent = text; }, 50);
  }

  // ---------------------------------------------------------------- answer extras
  // What `done` (or the JSON answer) adds to an answer: what rating it needs, the grounding
  // check's verdict, related questions, and the owner's contact when the site had nothing.
  function meta(a, d) {
    var g = d.grounding || {};
    a.req = d.request_id;
    a.sid = d.session_id || state.session_id;
    a.fb = d.feedback_token;
    a.weak = g.unsupported_sentences > 0 || g.invalid_citations > 0;
    a.sugg = (d.suggestions || []).slice(0, 3).map(function (s) { return s.question; }).filter(Boolean);
    a.handoff = d.handoff && d.handoff.url;
  }
  function extras(div, m) {
    var h = m.handoff && safeUrl(m.handoff, 1), n;
    if (m.weak) div.appendChild(el('div', 'note', T.ungrounded));
    if (h) { n = div.appendChild(el('div', 'note')); n.appendChild(link(h, T.contact)); }
    if (m.sugg && m.sugg.length) div.appendChild(chips(m.sugg));
    if (m.fb && m.req) div.appendChild(rating(m));
  }

  // Thumbs up/down, sent with the answer's token (docs/architecture.md, "Rating an answer");
  // a thumbs down also offers a short comment. The rating is kept with the message.
  var SVG = 'http://www.w3.org/2000/svg';
  function rating(m) {
    var box = el('div', 'fb'), say = el('span'), more;
    say.setAttribute('role', 'status');
    ['up', 'down'].forEach(function (r) {
      var b = box.appendChild(el('button')), svg = document.createElementNS(SVG, 'svg'),
          path = svg.appendChild(document.createElementNS(SVG, 'path'));
      // A drawn thumb (pointing down: turned over) rather than an emoji, which some systems
      // lack a font for.
      svg.setAttribute('viewBox', '0 0 24 24');
      svg.setAttribute('aria-hidden', 'true');
      path.setAttribute('d', 'M2 10h4v11H2zM8 21h9.5a2 2 0 0 0 2-1.6l1.4-7A2 2 0 0 0 19 10h-5.5l.9-4.3A1.8 1.8 0 0 0 12.6 3.5L8 9z');
      if (r == 'down') svg.style.transform = 'rotate(180deg)';
      b.appendChild(svg);
      b.type = 'button';
      b.title = T[r];
      b.setAttribute('aria-label', T[r]);
      b.setAttribute('aria-pressed', m.rating == r);
      b.addEventListener('click', function () {
        m.rating = r;
        save();
        box.querySelectorAll('[aria-pressed]').forEach(function (x) { x.setAttribute('aria-pressed', x == b); });
        rate(m, say);
        if (more) more.remove();
        more = r == 'down' && box.insertBefore(comment(m, say), say);
        scrollDown();
      });
    });
    if (m.thanked) say.textContent = T.thanks;
    box.appendChild(say);
    return box;
  }
  function comment(m, say) {
    var d = el('div', 'fb'), i = d.appendChild(el('input')), b = d.appendChild(el('button', null, T.send));
    i.maxLength = 500;
    i.placeholder = T.comment;
    i.setAttribute('aria-label', T.comment);
    b.type = 'button';
    function go() { if (i.value.trim()) { rate(m, say, i.value.trim()); d.remove(); } }
    b.addEventListener('click', go);
    i.addEventListener('keydown', function (e) { if (e.key == 'Enter' && !e.isComposing) { e.preventDefault(); go(); } });
    setTimeout(function () { i.focus(); });
    return d;
  }
  function rate(m, say, text, again) {
    fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ feedback: { request_id: m.req, session_id: m.sid, token: m.fb, rating: m.rating, comment: text } }),
      credentials: 'omit'
    }).then(function (res) {
      // The answer is recorded just after `done`: a rating at once may come before it.
      if (res.status == 404 && !again) return setTimeout(function () { rate(m, say, text, 1); }, 1500);
      say.textContent = res.ok ? T.thanks : T.server;
      m.thanked = res.ok;
      save();
    }, function () { say.textContent = T.network; });
  }

  // ---------------------------------------------------------------- contact
  // The owner's contact: data-contact, else `contact_url` from the function's health GET
  // (asked once, when the panel first opens). A mailto: link carries the last question.
  var contact = cfg.contact, asked = !!contact;
  function contactInfo() {
    if (asked) return;
    asked = true;
    fetch(endpoint, { credentials: 'omit' }).then(function (r) { return r.json(); })
      .then(function (d) { contact = d.contact_url; contactLink(); }, function () {});
  }
  function contactLink() {
    var box = $('.ct'), h = contact && safeUrl(contact, 1), q;
    box.hidden = !h;
    box.textContent = '';
    if (!h) return;
    state.messages.forEach(function (m) { if (m.role == 'user') q = m.text; });
    if (q && /^mailto:/.test(h)) {
      h += (h.indexOf('?') < 0 ? '?' : '&') + 'subject=' + encodeURIComponent(Array.from(q).slice(0, 80).join('')) + '&body=' + encodeURIComponent(q);
    }
    box.appendChild(link(h, T.contact));
  }
  launcher.addEventListener('click', contactInfo);

  // ---------------------------------------------------------------- open / close
  function setOpen(open, focus) {
    panel.hidden = !open;
    wrap.classList.toggle('open', open);
    launcher.setAttribute('aria-expanded', String(open));
    launcher.setAttribute('aria-label', open ? T.close : T.open);
    try { sessionStorage.setItem(OPEN_KEY, open ? '1' : ''); } catch (e) { /* ignore */ }
    // The bot-check puzzle (if the function sets one) is solved while the visitor types.
    if (open) { getProof(); scrollDown(); if (focus) input.focus(); }
    else if (focus) launcher.focus();
  }
  launcher.addEventListener('click', function () { setOpen(panel.hidden, true); });
  closeBtn.addEventListener('click', function () { setOpen(false, true); });
  panel.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') { e.preventDefault(); setOpen(false, true); }
  });
  clearBtn.addEventListener('click', function () {
    if (controller) controller.abort();
    clearInterval(retryTimer);
    state = { session_id: null, messages: [] };
    save(); renderAll(); input.focus();
  });

  // ---------------------------------------------------------------- input
  input.addEventListener('keydown', function (e) {
    // Enter sends, Shift+Enter is a newline; never send in the middle of an IME composition.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      // While a reply streams, Enter does nothing: only the Stop button stops it.
      if (!controller) submit(e);
    }
  });
  input.addEventListener('input', grow);
  function grow() { input.style.height = 'auto'; input.style.height = Math.min(input.scrollHeight + 2, 120) + 'px'; }
  form.addEventListener('submit', submit);
  function submit(e) {
    e.preventDefault();
    if (controller) { controller.abort(); return; }   // the button is "Stop" while streaming
    var q = input.value.trim();
    if (!q) return;
    input.value = ''; grow();
    send(q);
  }
  function busy(on) {
    goBtn.textContent = on ? T.stop : T.send;
    goBtn.setAttribute('aria-label', on ? T.stop : T.send);
  }

  // ---------------------------------------------------------------- bot check
  // With BOT_CHECK=pow the function answers only requests carrying a solved challenge
  // (docs/architecture.md, "Bot check"): a counter n for which SHA-256("<challenge>:n")
  // starts with `difficulty` zero bits. One solution serves until it expires. `proof` is
  // the promise of it ('' when the check is off or the challenge could not be had: the
  // function then says so, and the question is retried with a fresh one).
  var proof = null, proofExp = 0;
  function getProof(fresh) {
    if (fresh || !proof || Date.now() / 1000 > proofExp - 10) {
      var t0 = performance.now();
      proofExp = Infinity;
      proof = fetch(endpoint + (endpoint.indexOf('?') < 0 ? '?' : '&') + 'challenge', { credentials: 'omit' })
        .then(function (r) { return r.json(); })
        .then(function (c) {
          if (!c.challenge) return '';
          proofExp = c.expires_at;
          return solve(c.challenge, c.difficulty).then(function (p) {
            host.dataset.proofMs = Math.round(performance.now() - t0);   // for tests
            return p;
          });
        }).catch(function () { proofExp = 0; return ''; });
    }
    return proof;
  }
  // Hashes go to WebCrypto 64 at a time; the page stays responsive between batches.
  function solve(challenge, bits) {
    var enc = new TextEncoder(), n = 0;
    function zeros(h) {
      for (var i = 0, z = 0; i < h.length; i++, z += 8) if (h[i]) return z + Math.clz32(h[i]) - 24;
      return z;
    }
    function batch() {
      var tries = [];
      for (var i = 0; i < 64; i++) tries.push(crypto.subtle.digest('SHA-256', enc.encode(challenge + ':' + (n + i))));
      return Promise.all(tries).then(function (hs) {
        for (var i = 0; i < hs.length; i++) if (zeros(new Uint8Array(hs[i])) >= bits) return challenge + ':' + (n + i);
        n += 64;
        return batch();
      });
    }
    return batch();
  }

  // ---------------------------------------------------------------- network
  function send(q) {
    if (controller) return;
    var starterList = log.querySelector(':scope>.starters');
    if (starterList) starterList.remove();
    var u = { role: 'user', text: q };
    state.messages.push(u);
    contactLink();
    log.appendChild(u.node = bubble(u));
    ask();
  }

  function retry(m) {
    if (controller) return;
    // Drop the failed reply; the question before it is asked again.
    var i = state.messages.indexOf(m);
    if (i >= 0) state.messages.splice(i, 1);
    if (m.node) m.node.remove();
    var lastMsg = state.messages[state.messages.length - 1];
    if (lastMsg && lastMsg.role === 'user') ask();
  }

  // Context: recent completed turns, oldest first, ending with the new question.
  function context() {
    var out = [];
    state.messages.forEach(function (m) {
      if (m.role === 'user') out.push({ role: 'user', content: m.text });
      else if (m.status === 'done' && m.text) out.push({ role: 'assistant', content: m.text });
    });
    // Two questions in a row (after a failed reply) keep only the latest of the pair.
    out = out.filter(function (m, i) { return !(m.role === 'user' && out[i + 1] && out[i + 1].role === 'user'); });
    return out.slice(-MAX_CONTEXT);
  }

  function ask() {
    var a = { role: 'assistant', text: '', sources: [], status: 'pending' };
    var req = { messages: context(), session_id: state.session_id || undefined, stream: true };
    state.messages.push(a);
    log.appendChild(a.node = bubble(a));
    scrollDown();
    save();
    if (navigator.onLine === false) return fail(a, T.offline);
    controller = new AbortController();
    busy(true);
    var ctl = controller;
    // A refused or expired proof is solved afresh and the question sent once more.
    function post(again) {
      return getProof(again).then(function (p) {
        req.proof = p || undefined;
        return fetch(endpoint, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' },
          body: JSON.stringify(req),
          signal: ctl.signal,
          credentials: 'omit'
        });
      }).then(function (res) {
        if (res.status !== 403 || again) return res;
        return res.clone().json().then(function (d) {
          return /^bot_check_/.test(d.error && d.error.code) ? post(true) : res;
        }, function () { return res; });
      });
    }
    post().then(function (res) {
      if (!res.ok) return httpError(res, a);
      var type = res.headers.get('content-type') || '';
      if (type.indexOf('text/event-stream') >= 0 && res.body && res.body.getReader) return stream(res, a);
      return res.json().then(function (d) {
        // Non-streaming server (or proxy): the whole answer at once.
        if (d.session_id) state.session_id = d.session_id;
        a.sources = d.sources || [];
        a.text = String(d.reply || '');
        a.status = 'done';
        meta(a, d);
      });
    }).catch(function (err) {
      if (leaving) return;
      if (err && err.name === 'AbortError') { a.status = 'stopped'; return; }
      // fetch rejects with a TypeError when the network (or CORS) fails.
      fail(a, navigator.onLine === false ? T.offline : err && err.widget ? err.message : T.network);
    }).then(function () {
      if (leaving) return;
      if (a.status === 'pending') fail(a, T.cut);
      controller = null;
      busy(false);
      finish(a);
      if (a.status === 'done') announce(T.received + a.text.slice(0, 300));
      else if (a.status === 'stopped') announce(T.stopped);
    });
  }

  function fail(a, message, retryAt) {
    a.status = 'error';
    a.error = message;
    a.retryAt = retryAt;
    finish(a);
    announce(message);
  }

  function httpError(res, a) {
    return res.json().catch(function () { return {}; }).then(function (d) {
      var e = (d && d.error) || {};
      if (res.status === 429) {
        // Retry-After is seconds or an HTTP date; cross-origin it is readable only when the
        // server exposes it (Access-Control-Expose-Headers), else wait a modest default.
        var h = res.headers.get('retry-after'), secs = parseInt(h, 10);
        if (isNaN(secs) && h) secs = Math.ceil((Date.parse(h) - Date.now()) / 1000);
        if (!(secs >= 0)) secs = 10;
        fail(a, T.rate.replace('{s}', secs), Date.now() + secs * 1000);
      } else if (res.status >= 500) {
        fail(a, T.server + (e.request_id ? ' (' + e.request_id + ')' : ''));
      } else {
        // 4xx messages say what was wrong with the request (e.g. too long): show them.
        fail(a, e.message || T.server);
      }
    });
  }

  // Reads Server-Sent Events from a fetch body. Chunks may split anywhere (inside a line,
  // inside a UTF-8 character), so bytes go through a streaming TextDecoder and only complete
  // events (ended by a blank line) are dispatched.
  function stream(res, a) {
    var reader = res.body.getReader(), dec = new TextDecoder(), buf = '';
    function dispatch(block) {
      var ev = 'message', data = [];
      block.split('\n').forEach(function (line) {
        if (!line || line[0] === ':') return;          // comment / keep-alive
        var i = line.indexOf(':'), k = i < 0 ? line : line.slice(0, i);
        var v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (k === 'event') ev = v; else if (k === 'data') data.push(v);
      });
      if (!data.length) return;
      var d;
      try { d = JSON.parse(data.join('\n')); } catch (e) { return; }
      if (ev === 'sources') {
        a.sources = d.sources || [];
        if (d.session_id) { state.session_id = d.session_id; save(); }
      } else if (ev === 'delta') {
        a.text += d.text || '';
        saveSoon();   // a reload mid-answer keeps what has arrived (pagehide saves the rest)
        update(a);
      } else if (ev === 'done') {
        if (d.session_id) state.session_id = d.session_id;
        a.status = 'done';
        meta(a, d);
      } else if (ev === 'error') {
        var err = new Error(d.message || T.server);
        err.widget = true;
        throw err;
      }
    }
    function pump() {
      return reader.read().then(function (r) {
        buf += dec.decode(r.value || new Uint8Array(), { stream: !r.done });
        // CRLF / CR line ends become LF; a lone trailing CR waits for the next chunk, which
        // may start with the LF of the same line end.
        var cr = !r.done && buf.slice(-1) === '\r';
        buf = (cr ? buf.slice(0, -1) : buf).replace(/\r\n?/g, '\n') + (cr ? '\r' : '');
        var i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          var block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          dispatch(block);
        }
        if (r.done) { if (buf.trim()) dispatch(buf); return; }
        return pump();
      });
    }
    return pump();
  }

  // ---------------------------------------------------------------- start
  function mount() {
    document.body.appendChild(host);
    renderAll();
    var wasOpen = false;
    try { wasOpen = sessionStorage.getItem(OPEN_KEY) === '1'; } catch (e) { /* ignore */ }
    // Reopened after a reload, but without taking focus from the host page.
    setOpen(wasOpen, false);
    if (wasOpen) contactInfo();
  }
  if (document.body) mount(); else document.addEventListener('DOMContentLoaded', mount);
})();
