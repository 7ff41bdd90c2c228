-- isEntryId(id): whether id is a stream id as Redis writes one, {ms}-{seq}, each from 0 to 2^64 - 1 in decimal without
-- sign or leading zero (as the C# side's StreamIdGrammar checks a job id). Redis reads more, and not alike everywhere:
-- XPENDING takes '-', '+' and '(1-0' as range bounds where XACK refuses them, and both take '1' or '01-0' for the entry
-- 1-0. A script that settles an entry checks its id with this before its first write, so no id can fail a command
-- after another one wrote.

local function isDecimalU64(d)
  if #d > 1 and string.sub(d, 1, 1) == '0' then return false end
  return #d < 20 or (#d == 20 and d <= '18446744073709551615')
end
local function isEntryId(id)
  local ms, seq = string.match(id, '^(%d+)%-(%d+)$')
  return ms ~= nil and isDecimalU64(ms) and isDecimalU64(seq)
end
