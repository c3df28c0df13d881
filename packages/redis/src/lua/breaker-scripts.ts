import { luaScript } from '../redis-script-runner';

/**
 * Circuit breaker scripts. KEYS[1] is the state hash, KEYS[2] the half-open lease hash (same hash tag, same slot).
 * ARGV[1] is the caller's `now` or '' for the server clock (`TIME`): the logic is otherwise identical, so the
 * deterministic conformance suite (caller time) covers what production runs (server time).
 *
 * State hash fields: s = state, g = generation, ou = open until (ms), hs = probe successes this half-open period,
 * ls = lease sequence, sw = samplingWindow the buckets were made for, h = newest absolute bucket index,
 * tc/tf = calls/failures in the window, c0..c9/f0..f9 = per-bucket counts (slot = bucket index mod 10),
 * oc/of = calls/failures that last opened the breaker (kept while open and half-open, gone once closed),
 * bl = length of the current break (growing breaks, SPEC §14.3; kept while open and half-open, gone once closed).
 * Lease hash: lease id → expiry (ms). Fractional numbers go out as strings: Redis truncates Lua numbers in replies.
 * The arithmetic mirrors core's RollingWindow and InMemoryCircuitBreakerStore exactly.
 */
const PRELUDE = `
local K, L = KEYS[1], KEYS[2]
local B = 10
local function clock(arg)
  local t = tonumber(arg)
  if t then return t end
  local tm = redis.call('TIME')
  return tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
end
local function fmt(x) return string.format('%.17g', x) end
-- Re-buckets a window kept for samplingWindow osw into one for sw (another replica's config mid-deploy, a retune):
-- each old bucket's counts go to the new bucket holding its start; what falls outside the new window is dropped.
-- Same arithmetic, in the same order, as core's RollingWindow, so outcomes keep their times instead of being wiped.
local function rescale(h, osw, sw, c, f)
  local ow, nw = osw / B, sw / B
  local nh = math.floor(h * ow / nw)
  local nc, nf = {}, {}
  for i = 0, B - 1 do
    nc[i] = 0
    nf[i] = 0
  end
  for k = h - B + 1, h do
    local slot = k % B
    if c[slot] ~= 0 or f[slot] ~= 0 then
      local ni = math.floor(k * ow / nw)
      if ni > nh - B then
        local ns = ni % B
        nc[ns] = nc[ns] + c[slot]
        nf[ns] = nf[ns] + f[slot]
      end
    end
  end
  return nh, nc, nf
end
local function bucketNames()
  local names = {}
  for i = 0, B - 1 do names[#names + 1] = 'c' .. i end
  for i = 0, B - 1 do names[#names + 1] = 'f' .. i end
  return names
end
-- Frees the leases of probes that never reported within breakDuration, and cuts one expiring more than
-- breakDuration ahead (granted before the clock stepped back, or under a longer breakDuration) to that, as core's
-- reclaimLeases does. Answers how many leases are held and the soonest expiry.
local function reclaimLeases(now, bd)
  local held, soonest = 0, nil
  local leases = redis.call('HGETALL', L)
  for i = 1, #leases, 2 do
    local exp = tonumber(leases[i + 1])
    if exp <= now then
      redis.call('HDEL', L, leases[i])
    else
      if exp - now > bd then
        exp = now + bd
        redis.call('HSET', L, leases[i], fmt(exp))
      end
      held = held + 1
      if soonest == nil or exp < soonest then soonest = exp end
    end
  end
  return held, soonest
end
-- The break in force: breakDuration without growing breaks, else the stored length clamped to [bd, mbd]; and the
-- next one after a failed half-open period (× the multiplier, capped). As core's currentBreak / nextBreak.
local function currentBreak(bl, bd, mbd)
  if mbd == nil then return bd end
  return math.min(mbd, math.max(bd, bl or 0))
end
local function nextBreak(bl, bd, mbd, mult)
  if mbd == nil then return bd end
  return math.min(mbd, currentBreak(bl, bd, mbd) * mult)
end
-- oc/of: the calls and failures that opened the breaker, kept into half-open (dropped on close); bl likewise.
local function moveTo(state, g, ou, ttl, oc, of, bl)
  redis.call('DEL', K, L)
  if state == 'open' then
    redis.call('HSET', K, 's', state, 'g', g, 'ou', fmt(ou), 'oc', oc, 'of', of, 'bl', fmt(bl))
  elseif state == 'half_open' then
    redis.call('HSET', K, 's', state, 'g', g, 'oc', oc, 'of', of, 'bl', bl)
  else
    redis.call('HSET', K, 's', state, 'g', g)
  end
  redis.call('PEXPIRE', K, ttl)
end
`;

/**
 * ARGV: now, breakDuration, halfOpenMaxCalls, ttl, maxBreakDuration ('' = none) → {admitted, state, generation,
 * lease, retryAfter, from}.
 */
export const BREAKER_ACQUIRE = luaScript(
  'breaker-acquire',
  `${PRELUDE}
local now, bd, hmax, ttl = clock(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local mbd = tonumber(ARGV[5])
local st = redis.call('HMGET', K, 's', 'g', 'ou', 'hs', 'oc', 'of', 'bl')
local s, g = st[1] or 'closed', tonumber(st[2] or '0')
if s == 'closed' then return {1, 'closed', g, '', '0', ''} end
local from = ''
local hs = tonumber(st[4] or '0')
if s == 'open' then
  local ou = tonumber(st[3])
  -- TIME is a wall clock: after it steps back, the break still ends at most its length from now
  local len = currentBreak(tonumber(st[7]), bd, mbd)
  if ou - now > len then
    ou = now + len
    redis.call('HSET', K, 'ou', fmt(ou))
  end
  if now < ou then return {0, 'open', g, '', fmt(ou - now), ''} end
  g = g + 1
  hs = 0
  from = 'open'
  moveTo('half_open', g, 0, ttl, st[5] or 0, st[6] or 0, st[7] or 0)
end
local held, soonest = reclaimLeases(now, bd)
if held + hs >= hmax then
  local wait = bd
  if soonest then wait = soonest - now end
  return {0, 'half_open', g, '', fmt(wait), from}
end
local seq = redis.call('HINCRBY', K, 'ls', 1)
local lease = g .. ':' .. seq
redis.call('HSET', L, lease, fmt(now + bd))
redis.call('PEXPIRE', K, ttl)
redis.call('PEXPIRE', L, ttl)
return {1, 'half_open', g, lease, '0', from}
`,
);

/**
 * ARGV: now, samplingWindow, minThroughput, failureRatio, breakDuration, halfOpenMaxCalls, ttl, generation, lease,
 * outcome, maxBreakDuration ('' = none), breakDurationMultiplier → {state, from} or, when this outcome opened the breaker, {'open', from, calls, failures} of what opened it.
 */
export const BREAKER_RECORD = luaScript(
  'breaker-record',
  `${PRELUDE}
local now, sw, minT, ratio = clock(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local bd, hmax, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local pg, lease, outcome = tonumber(ARGV[8]), ARGV[9], ARGV[10]
local mbd, mult = tonumber(ARGV[11]), tonumber(ARGV[12])
local st = redis.call('HMGET', K, 's', 'g', 'sw', 'h', 'tc', 'tf')
local s, g = st[1] or 'closed', tonumber(st[2] or '0')
if pg ~= g or s == 'open' then return {s, ''} end
if s == 'half_open' then
  reclaimLeases(now, bd)
  if redis.call('HEXISTS', L, lease) == 0 then return {s, ''} end
  if outcome == 'failure' then
    -- what opens it again: the probes that reported this half-open period (successes, then this failure)
    local calls = tonumber(redis.call('HGET', K, 'hs') or '0') + 1
    local len = nextBreak(tonumber(redis.call('HGET', K, 'bl')), bd, mbd, mult)
    moveTo('open', g + 1, now + len, ttl, calls, 1, len)
    return {'open', 'half_open', calls, 1}
  end
  redis.call('HDEL', L, lease)
  if outcome == 'release' then return {s, ''} end
  if redis.call('HINCRBY', K, 'hs', 1) >= hmax then
    moveTo('closed', g + 1, 0, ttl)
    return {'closed', 'half_open'}
  end
  return {s, ''}
end
if outcome == 'release' then return {s, ''} end
local h, tc, tf = tonumber(st[4]), tonumber(st[5] or '0'), tonumber(st[6] or '0')
local osw = tonumber(st[3])
if h ~= nil and osw ~= sw then
  local old = redis.call('HMGET', K, unpack(bucketNames()))
  local c, f = {}, {}
  for i = 0, B - 1 do
    c[i] = tonumber(old[i + 1] or '0')
    f[i] = tonumber(old[B + i + 1] or '0')
  end
  local nc, nf
  h, nc, nf = rescale(h, osw, sw, c, f)
  tc, tf = 0, 0
  local w = {'sw', fmt(sw), 'h', fmt(h)}
  for i = 0, B - 1 do
    tc = tc + nc[i]
    tf = tf + nf[i]
    w[#w + 1] = 'c' .. i
    w[#w + 1] = nc[i]
    w[#w + 1] = 'f' .. i
    w[#w + 1] = nf[i]
  end
  w[#w + 1] = 'tc'
  w[#w + 1] = tc
  w[#w + 1] = 'tf'
  w[#w + 1] = tf
  redis.call('HSET', K, unpack(w))
end
local idx = math.floor(now / (sw / B))
-- Only the bucket counts that matter are read, and only changed fields are written back: a record in the current
-- bucket reads two counts and writes four fields.
local out = {}
local function put(name, value)
  out[#out + 1] = name
  out[#out + 1] = value
end
local slot
local count, fails = 0, 0
-- a fresh window: none yet, time ran a whole window ahead, or the clock stepped a whole window back (else every
-- sample would pile into the newest bucket until the clock caught up)
if h == nil or idx - h >= B or h - idx >= B then
  for i = 0, B - 1 do
    put('c' .. i, 0)
    put('f' .. i, 0)
  end
  tc, tf, h = 0, 0, idx
  put('sw', fmt(sw))
  put('h', fmt(h))
  slot = h % B
elseif idx > h then
  local names = {}
  for k = h + 1, idx do
    names[#names + 1] = 'c' .. (k % B)
    names[#names + 1] = 'f' .. (k % B)
  end
  local old = redis.call('HMGET', K, unpack(names))
  for i = 1, #names, 2 do
    tc = tc - tonumber(old[i] or '0')
    tf = tf - tonumber(old[i + 1] or '0')
    put(names[i], 0)
    put(names[i + 1], 0)
  end
  h = idx
  put('h', fmt(h))
  slot = h % B
else
  slot = h % B
  local cur = redis.call('HMGET', K, 'c' .. slot, 'f' .. slot)
  count, fails = tonumber(cur[1] or '0'), tonumber(cur[2] or '0')
end
count = count + 1
tc = tc + 1
put('c' .. slot, count)
if outcome == 'failure' then
  fails = fails + 1
  tf = tf + 1
  put('f' .. slot, fails)
end
put('tc', tc)
put('tf', tf)
if tf > 0 and tc >= minT and tf / tc >= ratio then
  moveTo('open', g + 1, now + bd, ttl, tc, tf, bd)
  return {'open', 'closed', tc, tf}
end
redis.call('HSET', K, unpack(out))
redis.call('PEXPIRE', K, ttl)
return {s, ''}
`,
);

/**
 * Read-only (an open breaker past its break reads half-open). ARGV: now, samplingWindow, breakDuration,
 * maxBreakDuration ('' = none) → {state, generation, calls, failures, retryAfter}: closed, the window at now; open and
 * half-open, what opened it (oc/of); retryAfter ('' unless open) = ms until the break ends, at most the break's
 * length, as acquire reads it.
 */
export const BREAKER_INSPECT = luaScript(
  'breaker-inspect',
  `${PRELUDE}
local now, sw, bd, mbd = clock(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fields = {'s', 'g', 'sw', 'h', 'ou', 'oc', 'of', 'bl'}
for _, name in ipairs(bucketNames()) do fields[#fields + 1] = name end
local v = redis.call('HMGET', K, unpack(fields))
local s, g, h = v[1] or 'closed', tonumber(v[2] or '0'), tonumber(v[4])
if s ~= 'closed' then
  local oc, of = tonumber(v[6] or '0'), tonumber(v[7] or '0')
  if s == 'open' then
    local wait = math.min(tonumber(v[5] or '0') - now, currentBreak(tonumber(v[8]), bd, mbd))
    if wait > 0 then return {s, g, oc, of, fmt(wait)} end
    s = 'half_open'
  end
  return {s, g, oc, of, ''}
end
if h == nil then return {s, g, 0, 0, ''} end
local c, f = {}, {}
for i = 0, B - 1 do
  c[i] = tonumber(v[9 + i] or '0')
  f[i] = tonumber(v[9 + B + i] or '0')
end
local osw = tonumber(v[3])
if osw ~= sw then h, c, f = rescale(h, osw, sw, c, f) end
local idx = math.floor(now / (sw / B))
if h - idx >= B then return {s, g, 0, 0, ''} end
local calls, fails = 0, 0
for k = math.max(h - B + 1, idx - B + 1), h do
  local slot = k % B
  calls = calls + c[slot]
  fails = fails + f[slot]
end
return {s, g, calls, fails, ''}
`,
);

/** ARGV: ttl. Closed, empty window, next generation. */
export const BREAKER_RESET = luaScript(
  'breaker-reset',
  `${PRELUDE}
local g = tonumber(redis.call('HGET', K, 'g') or '0') + 1
moveTo('closed', g, 0, ARGV[1])
return g
`,
);
