-- streamInfo(): the stream's XINFO STREAM reply as a table by field name (info['max-deleted-entry-id'],
-- info['entries-added'], ...; a field Redis does not report, before 7.0, is nil), or nil when Redis cannot tell it
-- (no stream, a key of another type). KEYS[1] is the stream. cancel.lua and vanished.lua read it.

local function streamInfo()
  local ok, reply = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
  if not ok then return nil end
  local info = {}
  for i = 1, #reply, 2 do info[reply[i]] = reply[i + 1] end
  return info
end
