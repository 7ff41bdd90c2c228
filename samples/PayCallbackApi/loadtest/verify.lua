-- Counts the accepted orders (a claim that was final: Queue and Naive mode's claim, Durable mode's commit) whose four
-- effects are not all recorded: callbacks answered 200 whose work was lost (or is not done yet). Run after the load:
--   redis-cli -p PORT --raw --eval verify.lua
-- Returns: accepted orders, incomplete ones, then up to five incomplete order keys. One SCAN over pay:order:* (about a
-- second per million orders, during which Redis serves nothing else).
local cursor, accepted, incomplete, sample = '0', 0, 0, {}
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', 'pay:order:*', 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    local v = redis.call('HMGET', key, 'accepted', 'settlement', 'sms', 'message', 'delivery')
    if v[1] == '1' then
      accepted = accepted + 1
      if not (v[2] == '1' and v[3] == '1' and v[4] == '1' and v[5] == '1') then
        incomplete = incomplete + 1
        if #sample < 5 then sample[#sample + 1] = key end
      end
    end
  end
until cursor == '0'
return { accepted, incomplete, unpack(sample) }
