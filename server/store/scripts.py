"""The Lua scripts: each state change of a game, room or board in one atomic call.

Every script reaches only the keys it is given (``KEYS``), all of one cluster slot
(``tests/server/test_cluster.py`` reads them to check it).
"""

from __future__ import annotations

__all__ = [
    "ACT",
    "ADD_PAUSES",
    "CLAIM_MATCH",
    "COUNT_START",
    "CREATE_GAME",
    "DROP_REMATCH",
    "END",
    "ENQUEUE_RATED",
    "JOIN_ROOM",
    "LEADERBOARD_SUBMIT",
    "LEAD_MATCHMAKING",
    "LEAVE_RATED",
    "LEAVE_ROOM",
    "LIVE_ADD",
    "MATCH",
    "PLACE_GAME",
    "PRESENCE",
    "RATE",
    "RESTART_GAME",
    "SET_STATUS",
    "SPECTATORS",
    "START_ROOM",
    "STATS_UPDATE",
]

# The game's channel is derived from KEYS[1] ("{g:ID}:meta" -> "{g:ID}:ev"). KEYS[5] is the
# set of nodes following the game: when it names only the origin (ARGV[6]), no other node
# needs the event and it is not published (the origin has delivered it already). ARGV[9] is
# the finishing time ('' when the racer is still playing). With ARGV[10] '1' the event is not
# published here but the answer's third part says whether it is to be: the caller publishes
# it once replicas have confirmed the action (--redis-wait-replicas), so that no node hears
# of an action a failover could still undo.
ACT = """
local meta = redis.call('HMGET', KEYS[1], 'state', 'ver')
if meta[1] ~= 'racing' then return {'over', meta[1] or ''} end
local racer = redis.call('HMGET', KEYS[2], 'changed', 'status')
local changed = tonumber(racer[1] or '-1')
if changed ~= tonumber(ARGV[2]) then return {'conflict', tostring(changed)} end
if racer[2] ~= 'playing' then return {'done', racer[2] or ''} end
local current = tonumber(meta[2])
local seen = tonumber(ARGV[1])
if seen < changed or seen > current then return {'stale', tostring(changed)} end
local ver = current + 1
redis.call('HSET', KEYS[1], 'ver', ver)
if ARGV[3] == 'push' then
  redis.call('RPUSH', KEYS[3], ARGV[4])
end
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[2], 'changed', ver, 'summary', ARGV[7], 'status', ARGV[8], 'finished', ARGV[9])
else
  redis.call('HSET', KEYS[2], 'changed', ver, 'summary', ARGV[7], 'status', ARGV[8])
end
redis.call('RPUSH', KEYS[4], ARGV[5])
local publish = redis.call('SCARD', KEYS[5]) ~= 1 or redis.call('SISMEMBER', KEYS[5], ARGV[6]) == 0
if ARGV[10] == '1' then return {'ok', tostring(ver), publish and '1' or '0'} end
if publish then
  redis.call('SPUBLISH', string.sub(KEYS[1], 1, -5) .. 'ev', ver .. '|' .. ARGV[6] .. '|' .. ARGV[5])
end
return {'ok', tostring(ver)}
"""

# A new game's own keys in one call: KEYS[1] its meta, KEYS[2] its log, KEYS[3] its followers
# (nodes), KEYS[4..] each racer's record, in seat order. ARGV[1] the first event, ARGV[2] the
# game's channel, ARGV[3] the origin node, ARGV[4] the follower mark's TTL in seconds ('': the
# origin is not marked as a follower), ARGV[5] the count of meta field/value pairs and then
# the pairs, then the count of racers and their names, then the field/value pairs every
# racer's record starts with (its summary). The first event is published whatever the mark.
CREATE_GAME = """
local pairs_meta = tonumber(ARGV[5])
local meta = {}
for i = 6, 5 + 2 * pairs_meta do meta[#meta + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(meta))
local at = 6 + 2 * pairs_meta
local names = tonumber(ARGV[at])
local common = {}
for i = at + 1 + names, #ARGV do common[#common + 1] = ARGV[i] end
for i = 4, 3 + names do
  redis.call('HSET', KEYS[i], 'name', ARGV[at + i - 3], 'status', 'playing', 'changed', 1, unpack(common))
end
redis.call('RPUSH', KEYS[2], ARGV[1])
if ARGV[4] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[3])
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4]))
end
redis.call('SPUBLISH', ARGV[2], '1|' .. ARGV[3] .. '|' .. ARGV[1])
return 1
"""

# KEYS[1] a game's meta, KEYS[2] its log; ARGV[1] its new start (ms), ARGV[2] its first event
# stamped with it. Moves the start of a game that nothing has happened in yet.
RESTART_GAME = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'start', ARGV[1])
redis.call('LSET', KEYS[2], 0, ARGV[2])
return 1
"""

# KEYS[1] player:ID; ARGV[1] a game id. Records the game the player is in; returns the
# key's time to live (ms; negative when it has none), which their new keys are given.
PLACE_GAME = """
redis.call('HSET', KEYS[1], 'game', ARGV[1])
return redis.call('PTTL', KEYS[1])
"""

# KEYS[1] stats:PLAYER:VARIANT; ARGV[1] the player's time to live (ms; <= 0: none). Counts
# one game started, the statistics kept as long as the player is.
COUNT_START = """
redis.call('HINCRBY', KEYS[1], 'started', 1)
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
"""

# KEYS[1] the live list; ARGV[1] a game id, ARGV[2] its start (ms), ARGV[3] the live list's
# channel. Adds a running game to the list and tells every node's watchers.
LIVE_ADD = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PUBLISH', ARGV[3], '+' .. ARGV[1])
return 1
"""

# KEYS[1] a game's spectator counts ({g:ID}:watchers, node -> count); ARGV[1] a node, ARGV[2]
# its count (0 takes it off). Returns the count over every node.
SPECTATORS = """
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('EXPIRE', KEYS[1], 3600)
local total = 0
for _, count in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(count) end
return total
"""

# KEYS[1] online:PLAYER; ARGV[1] node, ARGV[2] a change of its count, 'drop' (a dead node) or
# 'set' (ARGV[3] is the count: a node restating its connections).
PRESENCE = """
if ARGV[2] == 'drop' then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif ARGV[2] == 'set' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('EXPIRE', KEYS[1], 86400)
elseif tonumber(ARGV[2]) ~= 0 then
  if redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
  redis.call('EXPIRE', KEYS[1], 86400)
end
local total = 0
for _, count in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(count) end
return total
"""

SET_STATUS = """
if redis.call('HGET', KEYS[1], 'state') ~= 'racing' then return 0 end
if redis.call('HGET', KEYS[2], 'status') ~= 'playing' then return 0 end
local ver = redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('HSET', KEYS[2], 'changed', ver, unpack(ARGV, 4))
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('SPUBLISH', ARGV[2], ver .. '|' .. ARGV[3] .. '|' .. ARGV[1])
return ver
"""

END = """
if redis.call('HGET', KEYS[1], 'state') ~= 'racing' then return 0 end
if ARGV[7] and (redis.call('HGET', KEYS[1], 'paused') or '') ~= ARGV[7] then return -1 end
local ver = redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('HSET', KEYS[1], 'state', 'ended', 'ended', ARGV[3], 'standings', ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SPUBLISH', ARGV[2], ver .. '|' .. ARGV[6] .. '|' .. ARGV[1])
for i = 3, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return ver
"""

JOIN_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 'room_started' end
local members = redis.call('LRANGE', KEYS[2], 0, -1)
for _, m in ipairs(members) do if m == ARGV[1] then return 'ok' end end
if #members >= tonumber(redis.call('HGET', KEYS[1], 'max_players')) then return 'room_full' end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 'ok'
"""

LEAVE_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
local removed = redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if removed == 0 then return 'not_member' end
redis.call('HINCRBY', KEYS[1], 'ver', 1)
if redis.call('HGET', KEYS[1], 'host') == ARGV[1] then
  local next = redis.call('LINDEX', KEYS[2], 0)
  if next then redis.call('HSET', KEYS[1], 'host', next) else
    redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) return 'closed' end
end
return 'ok'
"""

START_ROOM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_such_room' end
if redis.call('HGET', KEYS[1], 'host') ~= ARGV[1] then return 'not_host' end
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 'room_started' end
if redis.call('LLEN', KEYS[2]) < 2 then return 'not_enough_players' end
redis.call('HSET', KEYS[1], 'state', 'starting', 'game', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return 'ok'
"""

DROP_REMATCH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

MATCH = """
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then return {} end
local popped = redis.call('ZPOPMIN', KEYS[1], ARGV[1])
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
return ids
"""


STATS_UPDATE = """
local key = KEYS[1]
local won, score, elapsed = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('HINCRBY', key, 'finished', 1)
redis.call('HINCRBY', key, 'total_score', score)
if tonumber(ARGV[4]) == 1 then redis.call('HINCRBY', key, 'dailies', 1) end
local best = tonumber(redis.call('HGET', key, 'best_score') or '-1')
if score > best then redis.call('HSET', key, 'best_score', score) end
if won == 1 then
  redis.call('HINCRBY', key, 'won', 1)
  local streak = redis.call('HINCRBY', key, 'streak', 1)
  local longest = tonumber(redis.call('HGET', key, 'longest_streak') or '0')
  if streak > longest then redis.call('HSET', key, 'longest_streak', streak) end
  local fastest = redis.call('HGET', key, 'best_time')
  if not fastest or elapsed < tonumber(fastest) then redis.call('HSET', key, 'best_time', elapsed) end
else
  redis.call('HSET', key, 'streak', 0)
end
return 1
"""

LEADERBOARD_SUBMIT = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
"""

# KEYS[1] a game's meta hash; ARGV: start1, end1, start2, end2, ... (ms). Merges the spans
# into the game's field "paused" (a JSON list of disjoint [start, end] pairs, in order), so
# that nodes reporting the same outage, each as it saw it, add it once. Returns the list.
ADD_PAUSES = """
if redis.call('HGET', KEYS[1], 'state') ~= 'racing' then
  return redis.call('HGET', KEYS[1], 'paused') or '[]'
end
local spans = cjson.decode(redis.call('HGET', KEYS[1], 'paused') or '[]')
for i = 1, #ARGV, 2 do
  table.insert(spans, {tonumber(ARGV[i]), tonumber(ARGV[i + 1])})
end
table.sort(spans, function(a, b) return a[1] < b[1] end)
local merged = {}
for _, span in ipairs(spans) do
  local last = merged[#merged]
  if last and span[1] <= last[2] then
    if span[2] > last[2] then last[2] = span[2] end
  elseif span[2] > span[1] then
    table.insert(merged, {span[1], span[2]})
  end
end
local out = '[]'
if #merged > 0 then out = cjson.encode(merged) end
redis.call('HSET', KEYS[1], 'paused', out)
return out
"""

# KEYS: rating:{PLAYER}, rating:{PLAYER}:games, rating:{PLAYER}:delta. ARGV: variant, game,
# the rated-race count the new rating was computed from, the new record (JSON), the change
# (JSON), when (ms), how many changes to keep. Applies a race's new rating once: 'done' if
# this game was applied already, 'moved' if another race changed the rating meanwhile.
RATE = """
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 'done' end
local current = redis.call('HGET', KEYS[1], ARGV[1])
local games = 0
if current then games = tonumber(cjson.decode(current)['n']) end
if games ~= tonumber(ARGV[3]) then return 'moved' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[5])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[7])
if excess > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
  redis.call('HDEL', KEYS[3], unpack(old))
end
return 'ok'
"""

# KEYS: the rated queue {mm:VARIANT}:q (player -> when their wait began, ms), :r (player ->
# rating), :left (player -> when they left, ms), :first (player -> when that wait began).
# ARGV: player, now, rating, memory (ms). A player who left less than ``memory`` ago
# resumes the wait they had (so leaving and coming back never narrows the rating window).
# Returns the number waiting and when this player's wait began.
ENQUEUE_RATED = """
local joined = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not joined then
  joined = ARGV[2]
  local left = redis.call('ZSCORE', KEYS[3], ARGV[1])
  if left and tonumber(ARGV[2]) - tonumber(left) <= tonumber(ARGV[4]) then
    joined = redis.call('HGET', KEYS[4], ARGV[1]) or ARGV[2]
  end
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZADD', KEYS[1], joined, ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {redis.call('ZCARD', KEYS[1]), tostring(joined)}
"""

# The same KEYS as ENQUEUE_RATED; ARGV: player, now, memory (ms). Takes a player out of the
# rated queue, remembering when their wait began; forgets such memories older than
# ``memory``. Returns 1 if the player was waiting.
LEAVE_RATED = """
local joined = redis.call('ZSCORE', KEYS[1], ARGV[1])
local cutoff = tonumber(ARGV[2]) - tonumber(ARGV[3])
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', cutoff, 'LIMIT', 0, 200)
if #old > 0 then
  redis.call('ZREM', KEYS[3], unpack(old))
  redis.call('HDEL', KEYS[4], unpack(old))
end
if not joined then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], joined)
return 1
"""

# KEYS: {mm:VARIANT}:q and :r. ARGV: the players of one match. Takes them all out of the
# queue, or none if any has left it meanwhile. Returns 1 when taken.
CLAIM_MATCH = """
for i = 1, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then return 0 end
end
redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
return 1
"""

# KEYS: {mm:VARIANT}:lead, {mm:VARIANT}:q. ARGV: node, lease (ms). The node that holds the
# lease forms the variant's matches; it keeps it by renewing it. Returns the number waiting
# when this node holds the lease, else -1.
LEAD_MATCHMAKING = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('ZCARD', KEYS[2])
"""

LIMIT_COUNT = """
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
if n > tonumber(ARGV[2]) then return ttl end
return 0
"""
"""KEYS: the counter. ARGV: window (ms), limit. Counts one more; returns 0 while within
the limit, else the ms until the window ends (the counter starts with its window)."""

LIMIT_PEEK = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then return 0 end
return math.max(redis.call('PTTL', KEYS[1]), 1)
"""
"""KEYS: the counter. ARGV: limit. Returns the ms until one more would be allowed (0: now)."""

LIMIT_FAIL = """
local locked = redis.call('PTTL', KEYS[2])
if locked > 0 then return locked end
if ARGV[5] == '0' then return 0 end
local fails = redis.call('HINCRBY', KEYS[1], 'fails', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if fails < tonumber(ARGV[1]) then return 0 end
local level = redis.call('HINCRBY', KEYS[1], 'level', 1)
redis.call('HSET', KEYS[1], 'fails', 0)
local ms = math.min(tonumber(ARGV[2]) * 2 ^ math.min(level - 1, 40), tonumber(ARGV[3]))
ms = math.floor(ms)
redis.call('SET', KEYS[2], '1', 'PX', ms)
return ms
"""
"""KEYS: the failures (hash: fails, level), the lock. ARGV: failures before a lockout, the
first lockout (ms), the longest (ms), how long failures are remembered (ms), 1 to record a
failure (0 to only look). Returns the ms the address stays locked out (0: not locked)."""
