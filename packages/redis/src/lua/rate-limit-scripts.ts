import { luaScript } from '../redis-script-runner';

/**
 * Token bucket script, the GCRA form of `@ballast/token-bucket` (state = the time `fa` the bucket is full again,
 * with `fl` its part below `fa`'s precision — a double-double, as in `TokenBucket` — plus the latest time seen
 * `lt`, so a clock stepping back never adds tokens), in one atomic step. As in
 * `TokenBucket` and the in-memory store, every call on an existing bucket — a read, a denied take — moves `lt`
 * forward, and an earlier `now` is treated as `lt`: a step back never takes back tokens already seen either.
 * KEYS[1]: the bucket hash. ARGV: now ('' = server `TIME`), permits, per, burst, n, op ('take' | 'tokens').
 * Replies {ok, tokens, retryAfter} with numbers as strings (Lua numbers would be truncated). A retune (other
 * permits/per/burst than stored) keeps the tokens the bucket holds, capped at the new burst, like the in-memory store.
 * The key expires once the bucket would be full again (plus 1 s): an absent key *is* a full bucket, so expiry
 * loses nothing.
 */
export const RATE_LIMIT = luaScript(
  'rate-limit',
  `
local K = KEYS[1]
local function fmt(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
if not now then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
end
local permits, per, burst, n, op = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local mpt = per / permits
local v = redis.call('HMGET', K, 'fa', 'lt', 'pm', 'pe', 'bu', 'fl')
local fa, lt = tonumber(v[1]), tonumber(v[2])
-- fa + fl is the full-again instant as a double-double (fl: the part below fa's precision), as in TokenBucket
local fl = tonumber(v[6]) or 0
local t = now
if lt and lt > t then t = lt end
local function available(fullAt, fullLow, cap, msPerToken)
  if fullAt == nil then return cap end
  local debt = fullAt - t + fullLow
  if not (debt > 0) then return cap end
  local x = cap - debt / msPerToken
  if x > 0 then return x end
  return 0
end
-- fullAt = max(fa, t) + n·mpt in double-double (TwoSum), so each take keeps its exact rounding error: at the
-- server's epoch-ms clock one number rounded every take to whole ulps of the clock (too many admitted at fast rates)
local function advanceFull(n)
  local owing = fa ~= nil and fa - t + fl > 0
  local high, low0 = t, 0
  if owing then high, low0 = fa, fl end
  local add = n * mpt
  local sum = high + add
  -- past the largest double the bucket is empty for good: TwoSum would give NaN, which reads as a full bucket
  if not (sum < math.huge) then
    fa, fl = math.huge, 0
    return
  end
  local virtual = sum - high
  local low = low0 + ((high - (sum - virtual)) + (add - virtual))
  local total = sum + low
  fa = total
  if total - total == 0 then fl = low - (total - sum) else fl = 0 end
end
local dirty = false
if fa and (tonumber(v[3]) ~= permits or tonumber(v[4]) ~= per or tonumber(v[5]) ~= burst) then
  local held = available(fa, fl, tonumber(v[5]), tonumber(v[4]) / tonumber(v[3]))
  local missing = burst - held
  if missing < 0 then missing = 0 end
  fa, fl = nil, 0
  advanceFull(missing)
  dirty = true
end
local a = available(fa, fl, burst, mpt)
local ok = false
local tol = 0
if op == 'take' then
  -- Within a tolerance of n counts as n (float refill, as in @ballast/token-bucket): waiting exactly retryAfter
  -- must do. The rounding grows with the clock's value (epoch ms on the server clock), so the tolerance does too,
  -- capped at half a token (half of n below 1): uncapped, a bucket of ~1M/s at epoch ms admitted every take.
  tol = 1e-9 + math.abs(t) * 2^-50 / mpt
  local tolCap = 0.5
  if n < 1 then tolCap = n / 2 end
  if tol > tolCap then tol = tolCap end
  -- more than burst is never granted, however the allowance falls (retryAfter is infinite)
  if n <= burst and a + tol >= n then
    ok = true
    advanceFull(n)
    a = available(fa, fl, burst, mpt)
    dirty = true
  elseif fa == nil then
    -- A denied take (n > burst) on an absent, full bucket: store it full at t, so its time counts as seen.
    fa, fl = t, 0
    dirty = true
  end
end
if dirty then
  redis.call('HSET', K, 'fa', fmt(fa), 'lt', fmt(t), 'pm', fmt(permits), 'pe', fmt(per), 'bu', fmt(burst), 'fl', fmt(fl))
  -- at most 2^53 - 1 ms: Redis refuses an expiry past 2^63 ms, which a huge \`per\` would otherwise ask for
  redis.call('PEXPIRE', K, math.min(math.max(1000, math.ceil(fa - t) + 1000), 9007199254740991))
elseif fa and not (lt and lt >= t) then
  -- Nothing else changed, but time moved forward: record it (the expiry, set from fa, stays as it is).
  redis.call('HSET', K, 'lt', fmt(t))
end
if op ~= 'take' or ok then return {1, fmt(a), '0'} end
-- As TokenBucket.msUntil: until fa + fl − (burst − n)·mpt, unclamped by the tokens shown (a take admitted within
-- the tolerance leaves the bucket owing a little more than it held, and the wait includes that)
local wait = fa - t + fl - (burst - n) * mpt
if not (wait > tol * mpt) then wait = 0 end
if n > burst then wait = math.huge end
return {0, fmt(a), fmt(wait)}
`,
);

/** KEYS[1]: the bucket hash. Deleting it refills the bucket. */
export const RATE_LIMIT_RESET = luaScript('rate-limit-reset', `redis.call('DEL', KEYS[1]) return 1`);
