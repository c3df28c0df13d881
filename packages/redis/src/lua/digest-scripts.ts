import { luaScript } from '../redis-script-runner';

/**
 * Latency digest scripts: a DDSketch per epoch, its bucket counts in a hash that every replica HINCRBYs (counts
 * add, so the fleet's sketch is the merge of everyone's samples). The bucket index is computed in JS with
 * `@datadog/sketches-js`'s LogarithmicMapping and sent as the field name ('z' = the zero bucket); the scripts only
 * count and rank, so no gamma arithmetic is duplicated in Lua.
 *
 * KEYS: [1] meta hash (r = reset token seen, w = window of the last writer, n = samples this epoch, est = bucket index of the estimate
 * from the last full epoch), [2] bucket hash of the current epoch, [3] the key's reset token (shared by its
 * quantiles, so one `reset` opens a fresh epoch for all of them without enumerating them).
 */
const PRELUDE = `
local M, BK, R = KEYS[1], KEYS[2], KEYS[3]
local r = redis.call('GET', R) or ''
`;

/** ARGV: bucket field, window, quantile, ttl → the estimate's bucket index, or '' while warming. */
export const DIGEST_OBSERVE = luaScript(
  'digest-observe',
  `${PRELUDE}
local field, window, q, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local m = redis.call('HMGET', M, 'r', 'w', 'n', 'est')
local n, est = tonumber(m[3] or '0'), m[4]
-- A reset token not seen yet opens a fresh epoch. Another window does not: replicas mid-deploy (or one that was
-- retuned) would wipe each other's epoch on every sample and the estimate would never warm; the epoch simply
-- closes at whichever caller's window it reaches first.
if m[1] ~= r then
  redis.call('DEL', M, BK)
  n, est = 0, false
end
redis.call('HINCRBY', BK, field, 1)
n = n + 1
if n >= window then
  -- the epoch is full: its q-quantile becomes the estimate (DDSketch's rank rule: the first bucket whose
  -- cumulative count exceeds q·(count − 1)), then a fresh epoch starts
  local kv = redis.call('HGETALL', BK)
  local zero, total, keys, counts = 0, 0, {}, {}
  for i = 1, #kv, 2 do
    local c = tonumber(kv[i + 1])
    total = total + c
    if kv[i] == 'z' then zero = c else
      local k = tonumber(kv[i])
      keys[#keys + 1] = k
      counts[k] = c
    end
  end
  table.sort(keys)
  local rank = q * (total - 1)
  est = 'z'
  if not (rank < zero) then
    local run = zero
    for _, k in ipairs(keys) do
      run = run + counts[k]
      est = tostring(k)
      if run > rank then break end
    end
  end
  redis.call('DEL', BK)
  n = 0
end
if est then
  redis.call('HSET', M, 'r', r, 'w', window, 'n', n, 'est', est)
else
  redis.call('HSET', M, 'r', r, 'w', window, 'n', n)
end
redis.call('PEXPIRE', M, ttl)
if n > 0 then redis.call('PEXPIRE', BK, ttl) end
if r ~= '' then redis.call('PEXPIRE', R, ttl) end
return est or ''
`,
);

/** Read-only. ARGV: window → the estimate's bucket index, or ''. */
export const DIGEST_READ = luaScript(
  'digest-read',
  `${PRELUDE}
local m = redis.call('HMGET', M, 'r', 'w', 'est')
if m[1] ~= r or not m[3] then return '' end
return m[3]
`,
);

/** KEYS[1]: the reset token. ARGV: a fresh token, ttl. Every quantile of the key starts a fresh epoch. */
export const DIGEST_RESET = luaScript(
  'digest-reset',
  `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1`,
);
