-- wrk script of infra/load.sh: generates search or chat requests, checks every answer and
-- writes what it saw where the shell can check it against the store.
--
-- Settings come from the environment (wrk passes no other way into every thread):
--   LOAD_KIND        search (GET and POST) | chat (POST) | health (GET, for warming up)
--   LOAD_OUT         directory for the results
--   LOAD_PHASE       name of this run, in file names and request ids
--   LOAD_RUN         tag of this load run, in request ids
--   LOAD_PER_THREAD  answers after which a thread stops (0: no bound)
--   LOAD_SECS        seconds after which a thread stops at its next answer (0: no bound)
--   LOAD_STREAM      chat: 1 asks for Server-Sent Events, else JSON
--   LOAD_SESSIONS    chat: 1 continues one conversation per thread (history is read back)
--
-- Run with one connection per thread (wrk -t N -c N): a thread stops only right after an
-- answer, so it leaves no request of its own in flight. That matters twice: every request
-- sent was answered, so the store can be checked exactly; and `cargo lambda watch` does not
-- cope with clients that hang up mid-request (the function instance that was answering can
-- exit and is not replaced), which is what wrk's own -d does to requests in flight. wrk's
-- -d is only a safety cap here, and it waits it out even when every thread is done, so the
-- caller interrupts it once every thread has created <phase>-done-<thread>.
-- Chat threads write "<status> <request_id>" per answer to <phase>-ids-<thread>.txt. done()
-- writes <phase>.json (counts, errors, latency percentiles) and, if the safety cap cut a
-- thread short, the id it left in flight to <phase>-inflight.txt.

local kind = os.getenv("LOAD_KIND") or "search"
local out = os.getenv("LOAD_OUT") or "."
local phase = os.getenv("LOAD_PHASE") or kind
local run = os.getenv("LOAD_RUN") or "x"
local per_thread = tonumber(os.getenv("LOAD_PER_THREAD") or "0") or 0
local secs = tonumber(os.getenv("LOAD_SECS") or "0") or 0
local stream = os.getenv("LOAD_STREAM") == "1"
local sessions = os.getenv("LOAD_SESSIONS") == "1"

-- Questions a visitor of the sample site asks, in both languages the product serves.
local questions = {
  "请介绍一下 Partial FC",
  "What is InsightFace?",
  "多模态大模型有哪些工作？",
  "How does RWKV-CLIP differ from CLIP?",
  "有哪些关于人脸识别的论文？",
  "Tell me about LLaVA-OneVision-1.5",
  "What is cluster discrimination?",
  "文档图像矫正",
}

-- Main state: every thread, for done().
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("id", #threads)
end

-- Per-thread state: globals, so done() can read them with thread:get().
ok, limited, bad_body, other, other_codes = 0, 0, 0, 0, ""
sent, answered, current, finished, by_deadline = 0, 0, "", false, false
local ids, deadline

function init(args)
  -- Whole seconds are precise enough for a bound of tens of seconds.
  deadline = os.time() + secs
  if kind == "chat" then
    ids = assert(io.open(string.format("%s/%s-ids-%d.txt", out, phase, id), "w"))
  end
end

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c)
    return string.format("%%%02X", string.byte(c))
  end))
end

local json_headers = { ["Content-Type"] = "application/json" }

function request()
  sent = sent + 1
  local q = questions[(sent + id) % #questions + 1]
  if kind == "health" then
    return wrk.format("GET", wrk.path)
  end
  if kind == "search" then
    -- Both ways the search function is called: GET ?q=&k= and POST {"query","top_k"}.
    if sent % 2 == 0 then
      return wrk.format("GET", wrk.path .. "?k=5&q=" .. urlencode(q))
    end
    return wrk.format("POST", nil, json_headers,
      string.format('{"query":"%s","top_k":5}', q))
  end
  -- Unique per request across runs: the store check matches answers to records by it.
  -- (wrk also calls this once to check the script, so one id in thread 1 goes unused.)
  current = string.format("load-%s-%s-t%d-%d", run, phase, id, sent)
  local session = ""
  if sessions then
    session = string.format(',"session_id":"load-%s-%s-s%d"', run, phase, id)
  end
  return wrk.format("POST", nil, json_headers, string.format(
    '{"message":"%s","request_id":"%s","stream":%s%s}',
    q, current, tostring(stream), session))
end

-- Whether a 200 carries a complete answer from the model (not an offline fallback, not an
-- error event in the middle of a stream).
local function good_body(body)
  if kind == "search" then
    return body:find('"hits"', 1, true) ~= nil
  end
  if kind == "health" then
    return body:find('"status":"ok"', 1, true) ~= nil
  end
  if stream then
    return body:find("event: done", 1, true) ~= nil
      and body:find("event: error", 1, true) == nil
      and body:find('"offline":false', 1, true) ~= nil
  end
  return body:find('"offline":false', 1, true) ~= nil
end

function response(status, headers, body)
  answered = answered + 1
  if status == 200 then
    if good_body(body) then
      ok = ok + 1
    else
      bad_body = bad_body + 1
      if bad_body <= 3 then
        io.stderr:write("unexpected 200 body: ", body:sub(1, 300), "\n")
      end
    end
  elseif status == 429 then
    limited = limited + 1
  else
    other = other + 1
    if other <= 3 then
      other_codes = other_codes .. " " .. status
      io.stderr:write("status ", status, ": ", body:sub(1, 300), "\n")
    end
  end
  if ids then
    ids:write(status, " ", current, "\n")
  end
  current = ""
  local quota_done = per_thread > 0 and answered >= per_thread
  by_deadline = secs > 0 and os.time() >= deadline
  if quota_done or by_deadline then
    finished = true
    if ids then
      ids:close()
      ids = nil
    end
    assert(io.open(string.format("%s/%s-done-%d", out, phase, id), "w")):close()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local t = { ok = 0, limited = 0, bad_body = 0, other = 0, answered = 0 }
  local codes, unfinished, timed = "", 0, 0
  local inflight = {}
  for _, thread in ipairs(threads) do
    for k in pairs(t) do
      t[k] = t[k] + thread:get(k)
    end
    codes = codes .. thread:get("other_codes")
    if not thread:get("finished") then
      unfinished = unfinished + 1
    end
    if thread:get("by_deadline") then
      timed = timed + 1
    end
    if thread:get("current") ~= "" then
      inflight[#inflight + 1] = thread:get("current")
    end
  end
  local f = assert(io.open(string.format("%s/%s-inflight.txt", out, phase), "w"))
  for _, rid in ipairs(inflight) do
    f:write(rid, "\n")
  end
  f:close()
  local e = summary.errors
  local elapsed = summary.duration / 1e6
  local j = assert(io.open(string.format("%s/%s.json", out, phase), "w"))
  j:write(string.format(
    '{"phase":"%s","kind":"%s","stream":%s,"threads":%d,"requests":%d,"seconds":%.3f,' ..
    '"rps":%.1f,"bytes":%d,"ok":%d,"limited":%d,"bad_body":%d,"other":%d,' ..
    '"other_codes":"%s","answered":%d,"unfinished_threads":%d,"deadline_threads":%d,"inflight":%d,' ..
    '"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},' ..
    '"latency_ms":{"p50":%.2f,"p90":%.2f,"p99":%.2f,"max":%.2f,"mean":%.2f}}\n',
    phase, kind, tostring(stream), #threads, summary.requests, elapsed,
    summary.requests / elapsed, summary.bytes, t.ok, t.limited, t.bad_body, t.other,
    codes, t.answered, unfinished, timed, #inflight,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3, latency.mean / 1e3))
  j:close()
end
