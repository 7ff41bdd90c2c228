-- trimSettled() and ackAndTrim(id), which acknowledges one entry first (need groupState.lua; KEYS[1] is the stream,
-- ARGV[1] the group). An acknowledged entry is not deleted one by one (each XDEL seeks the entry's node and walks it
-- up to the entry: about a third of the round's time); the stream is trimmed instead, exactly (XTRIM MINID: whole
-- nodes dropped, one partly settled node walked, once a round), up to the oldest entry still needed: the oldest one
-- pending, or else the first one not yet delivered. Settled entries behind a pending one stay until it is settled: a
-- long-running job holds back memory (the entries completed after it), never work; so does a queue that stops
-- completing jobs (the next round with acknowledgements trims). The scripts that settle a delivered entry otherwise
-- (a retry, a dead letter, a hand-back, a cancel, a reclaim as poison) acknowledge it and trim too: deleting it
-- would leave a tombstone that can cost the group its lag (see unfinished.lua). Trimming does not raise the stream's
-- max-deleted-entry-id (vanished.lua knows).
--- @include "groupState"

local function trimSettled()
  local pending, last = groupState()
  if not last then return end
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  if not ms or #seq > 15 then return end
  -- Everything below the entry after the last delivered one has been delivered.
  local bound = ms .. '-' .. string.format('%.0f', tonumber(seq) + 1)
  if pending > 0 then
    local oldest = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1)
    if #oldest > 0 then
      local oms, oseq = string.match(oldest[1][1], '^(%d+)-(%d+)$')
      oms, oseq = tonumber(oms), tonumber(oseq)
      if oms < tonumber(ms) or (oms == tonumber(ms) and oseq <= tonumber(seq)) then bound = oldest[1][1] end
    end
  end
  redis.pcall('XTRIM', KEYS[1], 'MINID', bound)
end
-- One entry settled by a script of its own (a retry, a dead letter, a cancel): acknowledged, then the trim.
local function ackAndTrim(id)
  redis.call('XACK', KEYS[1], ARGV[1], id)
  trimSettled()
end
