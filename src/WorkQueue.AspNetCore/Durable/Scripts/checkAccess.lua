-- KEYS: one key of each kind the queue keeps (its streams, sets, hashes, strings; see DurableAcl.cs), so that Redis
-- refuses the call itself, naming keys, when the connection's user may not reach them; nothing is read or written.
-- ARGV: probes, each its word count then its words: a command as the queue sends it, on the queue's keys and channels.
-- Tells which probes the user may not run, by redis.acl_check_cmd (Redis 7.0 and later), which checks the command, its
-- keys and its channels against the user who called the script, without running it. A command Redis does not know (a
-- renamed one) counts as refused. Returns the probes refused, by their number from 1, or false when Redis has no
-- acl_check_cmd (older than 7.0: nothing is checked); an error naming the probe whose word count is not a number of
-- words that follow.

if not redis.acl_check_cmd then return false end
local refused = {}
local i, number = 1, 0
while i <= #ARGV do
  local words = tonumber(ARGV[i])
  number = number + 1
  if not words or words < 1 or i + words > #ARGV then
    return redis.error_reply('ERR checkAccess: probe ' .. number .. ' has no command (its word count is ' .. tostring(ARGV[i]) .. ')')
  end
  local ok, allowed = pcall(redis.acl_check_cmd, unpack(ARGV, i + 1, i + words))
  if not (ok and allowed) then refused[#refused + 1] = number end
  i = i + 1 + words
end
return refused
