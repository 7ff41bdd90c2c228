-- groupState(): the group's pending count, last delivered id and lag (false when Redis cannot tell it), or nil
-- without the group. KEYS[1] is the stream, ARGV[1] the group. vanished.lua includes it.

local function groupState()
  local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
  if not ok then return nil end
  for _, g in ipairs(groups) do
    local name, pending, last, lag
    for i = 1, #g, 2 do
      local f = g[i]
      if f == 'name' then name = g[i + 1] elseif f == 'pending' then pending = g[i + 1]
      elseif f == 'last-delivered-id' then last = g[i + 1] elseif f == 'lag' then lag = g[i + 1] end
    end
    if name == ARGV[1] then return pending, last, lag end
  end
  return nil
end
