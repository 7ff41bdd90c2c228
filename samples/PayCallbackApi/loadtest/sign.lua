-- wrk script for PayCallbackApi: signed payment callbacks, unique ids, a share of duplicates, per-second counts.
--
--   wrk -t2 -c20 -d10s --timeout 30s -s sign.lua http://127.0.0.1:5080 -- <signingKey> [dupPercent]
--
-- The signing key may also come from the environment (PAYCALLBACK_SIGNING_KEY, or PayCallback__SigningKey as the app
-- reads it); the duplicate share defaults to 10 (%). PC_RUN_ID sets the run id embedded in every order/payment id
-- (default: the start time in base 36), so repeated runs against one Redis never collide.
--
-- Each request is POST /api/pay/callback with a body like
--   {"orderId":"o-<run>-<thread>-<n>","paymentId":"p-<run>-<thread>-<n>","amount":12.34,"currency":"CNY",
--    "status":"SUCCESS","paidAt":"2026-11-21T10:00:00Z"}
-- and X-Signature: sha256=<lowercase hex HMAC-SHA256 of the body>. About dupPercent% of the requests re-send, byte
-- for byte with the same signature, a body this thread sent before (a gateway retry): the app must answer 200 and
-- do nothing more.
--
-- Signing: wrk's LuaJIT has no crypto library, so this calls OpenSSL's one-shot HMAC() through LuaJIT's FFI. wrk
-- itself links libcrypto (for https), so the symbols are normally in the global namespace (ffi.C); otherwise
-- libcrypto.so.3 / libcrypto.so is loaded explicitly.
--
-- At the end, done() prints machine-readable lines for analyze.py (prefix "PC_"): totals, wrk's latency percentiles,
-- response codes, and the number of responses completed in each one-second window since the start of the run.
-- wrk's latency histogram drops responses slower than --timeout (they count as timeout errors instead).

local ffi = require("ffi")

ffi.cdef [[
typedef struct evp_md_st EVP_MD;
const EVP_MD *EVP_sha256(void);
unsigned char *HMAC(const EVP_MD *evp_md, const void *key, int key_len,
                    const unsigned char *d, size_t n, unsigned char *md, unsigned int *md_len);
struct pc_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clk_id, struct pc_timespec *tp);
]]

local CLOCK_MONOTONIC = 1

local function load_crypto()
  local ok = pcall(function() return ffi.C.HMAC ~= nil and ffi.C.EVP_sha256 ~= nil end)
  if ok then return ffi.C end
  for _, name in ipairs({ "libcrypto.so.3", "crypto" }) do
    local loaded, lib = pcall(ffi.load, name)
    if loaded then return lib end
  end
  error("sign.lua: cannot find OpenSSL's HMAC (libcrypto) for signing callbacks")
end

local crypto = load_crypto()
local ts = ffi.new("struct pc_timespec")

local function now()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local hex = {}
for i = 0, 255 do hex[i] = string.format("%02x", i) end

local md = ffi.new("unsigned char[32]")
local md_len = ffi.new("unsigned int[1]")

local function hmac_sha256_hex(key, data)
  if crypto.HMAC(crypto.EVP_sha256(), key, #key, data, #data, md, md_len) == nil then
    error("sign.lua: HMAC() failed")
  end
  local parts = {}
  for i = 0, md_len[0] - 1 do parts[#parts + 1] = hex[md[i]] end
  return table.concat(parts)
end

local function base36(n)
  local digits, s = "0123456789abcdefghijklmnopqrstuvwxyz", ""
  n = math.floor(n)
  repeat
    local d = n % 36
    s = digits:sub(d + 1, d + 1) .. s
    n = math.floor(n / 36)
  until n == 0
  return s
end

---------------------------------------------------------------------------------------------------------------------
-- Main state: hands each thread an id, the run id and the common start time; collects the counts in done().

local threads = {}
local main_run_id = os.getenv("PC_RUN_ID") or base36(os.time())
local main_t0 = nil

function setup(thread)
  main_t0 = main_t0 or now()
  threads[#threads + 1] = thread
  thread:set("id", #threads)
  thread:set("run_id", main_run_id)
  thread:set("t0", main_t0)
end

---------------------------------------------------------------------------------------------------------------------
-- Thread states. Globals (not locals) so that done() can read them with thread:get().

signing_key = nil
dup_percent = 10
seq = 0
history = {}
history_next = 1
HISTORY_SIZE = 64
sent_new = 0
sent_dup = 0
seconds = {}  -- [window index since t0] = responses completed in it
codes = {}    -- [HTTP status] = responses

function init(args)
  signing_key = args[1]
  if signing_key == nil or signing_key == "" then
    signing_key = os.getenv("PAYCALLBACK_SIGNING_KEY") or os.getenv("PayCallback__SigningKey")
  end
  if signing_key == nil or signing_key == "" then
    error("sign.lua: no signing key (pass it after '--' or set PAYCALLBACK_SIGNING_KEY)")
  end
  if args[2] then dup_percent = tonumber(args[2]) end
  math.randomseed(id * 7919 + os.time())
  t0 = t0 or now()
end

function request()
  local body, signature
  if #history > 0 and math.random(100) <= dup_percent then
    local earlier = history[math.random(#history)]
    body, signature = earlier[1], earlier[2]
    sent_dup = sent_dup + 1
  else
    seq = seq + 1
    local suffix = run_id .. "-" .. id .. "-" .. seq
    body = string.format(
      '{"orderId":"o-%s","paymentId":"p-%s","amount":%d.%02d,"currency":"CNY","status":"SUCCESS","paidAt":"%s"}',
      suffix, suffix, math.random(1, 999), math.random(0, 99), os.date("!%Y-%m-%dT%H:%M:%SZ"))
    signature = "sha256=" .. hmac_sha256_hex(signing_key, body)
    history[history_next] = { body, signature }
    history_next = history_next % HISTORY_SIZE + 1
    sent_new = sent_new + 1
  end
  return wrk.format("POST", "/api/pay/callback",
    { ["Content-Type"] = "application/json", ["X-Signature"] = signature }, body)
end

function response(status, headers, body)
  local window = math.floor(now() - t0)
  seconds[window] = (seconds[window] or 0) + 1
  codes[status] = (codes[status] or 0) + 1
end

---------------------------------------------------------------------------------------------------------------------

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("PC_SUMMARY duration_us=%d requests=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
  io.write(string.format("PC_LATENCY_US mean=%.1f p50=%d p99=%d max=%d\n",
    latency.mean, latency:percentile(50), latency:percentile(99), latency.max))
  local all_seconds, all_codes, new, dup = {}, {}, 0, 0
  for _, thread in ipairs(threads) do
    for window, n in pairs(thread:get("seconds") or {}) do all_seconds[window] = (all_seconds[window] or 0) + n end
    for code, n in pairs(thread:get("codes") or {}) do all_codes[code] = (all_codes[code] or 0) + n end
    new = new + (thread:get("sent_new") or 0)
    dup = dup + (thread:get("sent_dup") or 0)
  end
  io.write(string.format("PC_SENT new=%d duplicate=%d\n", new, dup))
  for code, n in pairs(all_codes) do io.write(string.format("PC_CODE %s %d\n", tostring(code), n)) end
  local last = -1
  for window in pairs(all_seconds) do if window > last then last = window end end
  for window = 0, last do io.write(string.format("PC_SECOND %d %d\n", window, all_seconds[window] or 0)) end
end
