-- KEYS: stream (the queue's: Redis Cluster runs the script on the node that holds the queue; nothing is read or
-- written). ARGV: none. Reads what the startup checks need (DurableServerChecks.cs): the server's version as the script
-- engine reports it (Redis 7.0 and later; absent before) and INFO's sections server, memory and persistence, read one
-- at a time (INFO takes one section before Redis 7.0). INFO runs from a script, where CONFIG may not, so the checks
-- need no admin mode in the client and work where a managed Redis refuses CONFIG.
-- Returns { the version or false, the sections' text or false, Redis's refusal of INFO (an ACL, say) or false }.

local version = redis.REDIS_VERSION or false
local text = {}
for _, section in ipairs({ 'server', 'memory', 'persistence' }) do
  local info = redis.pcall('INFO', section)
  if type(info) == 'table' and info.err then return { version, false, info.err } end
  text[#text + 1] = info
end
return { version, table.concat(text, '\r\n'), false }
