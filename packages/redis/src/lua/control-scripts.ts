import { luaScript } from '../redis-script-runner';

/**
 * The control store's scripts (SPEC §14.1). Every key shares the `{control}` hash tag, so each script touches one
 * Redis Cluster slot. Values the scripts store are `<fields>|<json>`: the numbers a script must read (seq, expiry,
 * version) before a `|`, then JSON built by the caller and stored verbatim (Redis's cjson would turn `[]` into `{}`).
 *
 * Keys: state hash (`seq`, `f:<key id>` force-opens, `v:<policy>` retunes, `s:<action>:<policy>` settings), resets
 * list, audit stream, replicas hash.
 */

/** Returns the server's or the caller's time in ms: ARGV `now` empty = `TIME`. */
const NOW = `
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * KEYS: state, resets, audit. ARGV: now, action, key id, policy id, policy, route flag ('1' when a route is given),
 * entry JSON, ttl ('' none), ifVersion ('' none), spec JSON (a setting: its value JSON), audit JSON, max audit,
 * channel, max resets, publish command (PUBLISH, or SPUBLISH for sharded pub/sub: the channel shares the keys'
 * `{control}` tag, so a script may publish on it in a Cluster).
 * Returns {1, seq, version} or {0, version} (a stale ifVersion: nothing changed).
 */
export const CONTROL_WRITE = luaScript(
  'control-write',
  `${NOW}
local now = clock(ARGV[1])
local action, id, pid, policy, routed = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local entry, ttl, ifv, spec, audit = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
local version = ''
if action == 'retune' then
  local cur = redis.call('HGET', KEYS[1], 'v:' .. policy)
  local v = 0
  if cur then v = tonumber(string.match(cur, '^(%d+)|')) end
  if ifv ~= '' and tonumber(ifv) ~= v then return {0, v} end
  version = v + 1
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if action == 'forceOpen' then
  local exp = ''
  if ttl ~= '' then exp = tostring(now + tonumber(ttl)) end
  redis.call('HSET', KEYS[1], 'f:' .. id, seq .. '|' .. exp .. '|' .. entry)
elseif action == 'clearForcedOpen' then
  if routed == '1' then
    redis.call('HDEL', KEYS[1], 'f:' .. id)
  else
    local whole, prefix = 'f:' .. pid, 'f:' .. pid .. '|'
    for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
      if field == whole or string.sub(field, 1, #prefix) == prefix then redis.call('HDEL', KEYS[1], field) end
    end
  end
elseif action == 'resetBreaker' then
  redis.call('RPUSH', KEYS[2], seq .. '|' .. entry)
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[14]), -1)
elseif action == 'retune' then
  redis.call('HSET', KEYS[1], 'v:' .. policy, version .. '|' .. spec)
elseif action == 'setMode' or action == 'setChaos' then
  redis.call('HSET', KEYS[1], 's:' .. action .. ':' .. policy, seq .. '|' .. spec)
end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[12], '*', 'e', audit, 'v', tostring(version))
redis.call(ARGV[15], ARGV[13], tostring(seq))
return {1, seq, version}
`,
);

/**
 * KEYS: state, resets. ARGV: now. Drops expired force-opens, then returns {seq, now, fields..., '', resets...}:
 * the state's remaining fields as name/value pairs.
 */
export const CONTROL_READ = luaScript(
  'control-read',
  `${NOW}
local now = clock(ARGV[1])
local out = {tostring(redis.call('HGET', KEYS[1], 'seq') or '0'), tostring(now)}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local field, value = all[i], all[i + 1]
  if string.sub(field, 1, 2) == 'f:' then
    local exp = string.match(value, '^%d+|(%d*)|')
    if exp ~= nil and exp ~= '' and tonumber(exp) <= now then
      redis.call('HDEL', KEYS[1], field)
    else
      out[#out + 1] = field
      out[#out + 1] = value
    end
  elseif field ~= 'seq' then
    out[#out + 1] = field
    out[#out + 1] = value
  end
end
out[#out + 1] = ''
for _, r in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do out[#out + 1] = r end
return out
`,
);

/** KEYS: state. The current seq. */
export const CONTROL_SEQ = luaScript('control-seq', `return redis.call('HGET', KEYS[1], 'seq') or '0'`);

/** KEYS: audit. ARGV: entry JSON, max audit. A local-scope entry. */
export const CONTROL_RECORD = luaScript(
  'control-record',
  `redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[1], 'v', '')
return 1`,
);

/** KEYS: audit. ARGV: limit. Newest first: {id, fields...} pairs flattened as id, e, v. */
export const CONTROL_AUDIT = luaScript(
  'control-audit',
  `local out = {}
for _, item in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', tonumber(ARGV[1]))) do
  local e, v = '', ''
  local f = item[2]
  for i = 1, #f, 2 do
    if f[i] == 'e' then e = f[i + 1] elseif f[i] == 'v' then v = f[i + 1] end
  end
  out[#out + 1] = item[1]
  out[#out + 1] = e
  out[#out + 1] = v
end
return out`,
);

/** KEYS: replicas. ARGV: now, id, ttl (0 = until it leaves), info JSON. Stored as `expiry|lastSeen|json`. */
export const CONTROL_HEARTBEAT = luaScript(
  'control-heartbeat',
  `${NOW}
local now = clock(ARGV[1])
local exp = ''
if tonumber(ARGV[3]) > 0 then exp = tostring(now + tonumber(ARGV[3])) end
redis.call('HSET', KEYS[1], ARGV[2], exp .. '|' .. now .. '|' .. ARGV[4])
return 1`,
);

/** KEYS: replicas. ARGV: id. */
export const CONTROL_LEAVE = luaScript('control-leave', `return redis.call('HDEL', KEYS[1], ARGV[1])`);

/** KEYS: replicas. ARGV: now. Drops expired replicas, returns the others' stored values. */
export const CONTROL_REPLICAS = luaScript(
  'control-replicas',
  `${NOW}
local now = clock(ARGV[1])
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local exp = string.match(all[i + 1], '^(%d*)|')
  if exp ~= nil and exp ~= '' and tonumber(exp) <= now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    out[#out + 1] = all[i + 1]
  end
end
return out`,
);
