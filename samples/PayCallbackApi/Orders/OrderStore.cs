using System.Globalization;
using PayCallbackApi.Callbacks;
using PayCallbackApi.PostPayment;
using StackExchange.Redis;

namespace PayCallbackApi.Orders;

/// <summary>What happened when a callback tried to claim its payment.</summary>
public enum ClaimResult
{
    /// <summary>First time this payment was seen: the order is marked and its side effects are due.</summary>
    New,

    /// <summary>This payment was already processed (a retried or duplicated callback): no side effects.</summary>
    Duplicate,

    /// <summary>
    /// A different payment for an order already paid: the customer was charged twice. It is recorded (a refund is due)
    /// and answered like a duplicate; the order's effects are not run again.
    /// </summary>
    DuplicateCharge,

    /// <summary>
    /// Durable mode only: another request holds this payment's claim and has not yet stored its job (or died doing so;
    /// the claim then expires). The callback is answered 503 so that the gateway retries it.
    /// </summary>
    InProgress,
}

/// <summary>What a legacy provider call should do, from <see cref="OrderStore.BeginProviderCall"/>.</summary>
public enum ProviderCall
{
    /// <summary>The effect is not recorded yet: make the call (for the first time).</summary>
    First,

    /// <summary>The effect is not recorded, but a call was started before (a crash or a failure): make it again.</summary>
    Repeat,

    /// <summary>The effect is already recorded: do not call the provider again.</summary>
    AlreadyDone,
}

/// <summary>
/// The Redis side of orders. Every step that must happen once is one Lua script, so a crash or a retry between two
/// commands can neither skip nor double it: the payment claim (<c>SET pay:payment:{id} NX</c> with the order update),
/// the Redis post-payment steps (settlement and message, each recorded with its effect flag), and each effect flag's
/// 0 -> 1 transition, which is what the counters count.
/// </summary>
public sealed class OrderStore
{
    public const string StatsAccepted = "pay:stats:accepted";
    public const string StatsCompleted = "pay:stats:completed";
    public static readonly string[] Effects = ["settlement", "sms", "message", "delivery"];

    private static readonly TimeSpan PaymentKeyTtl = TimeSpan.FromDays(7);

    // Durable mode: how long a claim may wait for its job to be stored. A process killed in between leaves the claim
    // to expire, after which the gateway's retry is processed afresh (and finds the order as the first attempt left it).
    private static readonly TimeSpan PendingClaimTtl = TimeSpan.FromSeconds(30);

    // Marks one effect done (a no-op when it already is), counting the 0 -> 1 transition and, when it completes the set,
    // the order. Shared by the scripts below. KEYS[1] is the order; the counters are literal (one Redis, no cluster).
    private const string MarkEffectFunction = """
        local function mark(order, effect)
          if redis.call('HGET', order, effect) ~= '0' then return 0 end
          redis.call('HSET', order, effect, '1')
          redis.call('INCR', 'pay:stats:effect:' .. effect)
          local v = redis.call('HMGET', order, 'settlement', 'sms', 'message', 'delivery')
          if v[1] == '1' and v[2] == '1' and v[3] == '1' and v[4] == '1' then redis.call('INCR', 'pay:stats:completed') end
          return 1
        end
        """;

    // A successful payment for an order already paid by another payment: recorded as a duplicate charge (the payment's
    // key marks it processed, the order counts it, the list holds it for a refund), the order and its effects untouched.
    // KEYS[2] is the order. ARGV: as the claim scripts. Returns true when it recorded one.
    private const string DuplicateChargeFunction = """
        local function duplicateCharge(paymentKey, order, done)
          if ARGV[7] ~= 'Paid' or redis.call('HGET', order, 'status') ~= 'Paid' then return false end
          local first = redis.call('HGET', order, 'paymentId')
          if not first or first == ARGV[2] then return false end
          redis.call('SET', paymentKey, done, 'EX', ARGV[6])
          redis.call('HINCRBY', order, 'duplicateCharges', 1)
          redis.call('INCR', 'pay:stats:duplicate-charges')
          redis.call('RPUSH', 'pay:duplicate-charges', cjson.encode({ orderId = ARGV[1], paymentId = ARGV[2], amount = ARGV[3], currency = ARGV[4], paidAt = ARGV[5], firstPaymentId = first }))
          return true
        end
        """;

    // Queue mode. KEYS: payment key, order key, accepted counter. ARGV: orderId, paymentId, amount, currency, paidAt,
    // ttl, status. 1 = new, 2 = duplicate, 4 = duplicate charge.
    private const string ClaimScript = DuplicateChargeFunction + """

        if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
        if duplicateCharge(KEYS[1], KEYS[2], ARGV[1]) then return 4 end
        if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[6]) then return 2 end
        if ARGV[7] == 'Paid' then
          redis.call('HSET', KEYS[2], 'status', 'Paid', 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5],
            'settlement', '0', 'sms', '0', 'message', '0', 'delivery', '0', 'accepted', '1')
          redis.call('INCR', KEYS[3])
          return 1
        end
        if redis.call('HGET', KEYS[2], 'status') ~= 'Paid' then
          redis.call('HSET', KEYS[2], 'status', ARGV[7], 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5])
        end
        return 2
        """;

    // Queue mode: undoes a claim whose job the queue refused. KEYS: payment key, order key, accepted counter. ARGV: orderId.
    private const string ReleaseScript = """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        redis.call('DEL', KEYS[1], KEYS[2])
        redis.call('DECR', KEYS[3])
        return 1
        """;

    // Durable mode, phase 1: a pending claim ('p') that expires. The order is created once and never reset: a retry of a
    // callback whose first attempt may have stored its job (a kill before the answer) finds the effects as they are.
    // KEYS, ARGV: as ClaimScript, plus ARGV[8] = pending ttl. 1 = new, 2 = duplicate, 3 = in progress, 4 = duplicate charge.
    private const string ClaimPendingScript = DuplicateChargeFunction + """

        local held = redis.call('GET', KEYS[1])
        if held == 'd' then return 2 end
        if held then return 3 end
        if duplicateCharge(KEYS[1], KEYS[2], 'd') then return 4 end
        if ARGV[7] ~= 'Paid' then
          if redis.call('HGET', KEYS[2], 'status') == 'Paid' then return 2 end
          redis.call('SET', KEYS[1], 'd', 'EX', ARGV[6])
          redis.call('HSET', KEYS[2], 'status', ARGV[7], 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5])
          return 2
        end
        redis.call('SET', KEYS[1], 'p', 'EX', ARGV[8])
        if redis.call('HGET', KEYS[2], 'paymentId') ~= ARGV[2] then
          redis.call('HSET', KEYS[2], 'status', 'Paid', 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5],
            'settlement', '0', 'sms', '0', 'message', '0', 'delivery', '0')
        end
        return 1
        """;

    // Durable mode, phase 2, once the job is in Redis: the claim becomes final and the callback counts as accepted
    // (exactly once per payment, whichever attempt gets here first). KEYS: payment key, order key, accepted counter.
    // ARGV: ttl.
    private const string CommitScript = """
        if redis.call('GET', KEYS[1]) == 'd' then return 0 end
        redis.call('SET', KEYS[1], 'd', 'EX', ARGV[1])
        redis.call('HSET', KEYS[2], 'accepted', '1')
        redis.call('INCR', KEYS[3])
        return 1
        """;

    // Durable mode: the job could not be stored; drop the pending claim so the gateway's retry starts afresh. The order
    // stays (a job whose XADD reply was lost may still run, and finds it). KEYS: payment key.
    private const string ReleasePendingScript = """
        if redis.call('GET', KEYS[1]) ~= 'p' then return 0 end
        redis.call('DEL', KEYS[1])
        return 1
        """;

    // The post-payment job's Redis steps in one round trip: settlement (merchant balance) and the payment message, each
    // done at most once, with their effects. KEYS: order key, balance key. ARGV: currency, amount, channel, message.
    // -1 = no such order.
    private const string PostPaymentScript = MarkEffectFunction + """

        if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
        if redis.call('HGET', KEYS[1], 'settlement') == '0' then
          redis.call('HINCRBYFLOAT', KEYS[2], ARGV[1], ARGV[2])
          mark(KEYS[1], 'settlement')
        end
        if redis.call('HGET', KEYS[1], 'message') == '0' then
          redis.call('PUBLISH', ARGV[3], ARGV[4])
          mark(KEYS[1], 'message')
        end
        return 1
        """;

    // Before a legacy provider call: 0 = the effect is recorded (skip the call), otherwise the attempt's number (a call
    // started before and not recorded ran just before a crash or failed: counted as a repeat). KEYS: order key. ARGV:
    // effect, then optionally the effect of the call that just returned, recorded first in the same round trip.
    private const string BeginCallScript = MarkEffectFunction + """

        if ARGV[2] then mark(KEYS[1], ARGV[2]) end
        local done = redis.call('HGET', KEYS[1], ARGV[1])
        if done == '1' then return 0 end
        if not done then return -1 end
        local n = redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':calls', 1)
        if n > 1 then redis.call('INCR', 'pay:stats:repeats:' .. ARGV[1]) end
        return n
        """;

    // After a legacy provider call. KEYS: order key. ARGV: effect.
    private const string EffectScript = MarkEffectFunction + """

        return mark(KEYS[1], ARGV[1])
        """;

    private static readonly string[] Scripts =
        [ClaimScript, ReleaseScript, ClaimPendingScript, CommitScript, ReleasePendingScript, PostPaymentScript, BeginCallScript, EffectScript];

    private readonly IServiceProvider _services;
    private IDatabase? _database;

    public OrderStore(IServiceProvider services)
    {
        // The multiplexer is resolved on first use, not here: in Naive mode that first use is the first request, which
        // is exactly the cold connection the incident paid for.
        _services = services;
    }

    private IDatabase Database => _database ??= _services.GetRequiredService<IConnectionMultiplexer>().GetDatabase();

    /// <summary>Loads the scripts on every endpoint: a Redis warm-up callback.</summary>
    public static async Task LoadScriptsAsync(IConnectionMultiplexer multiplexer, CancellationToken cancellationToken)
    {
        foreach (var endpoint in multiplexer.GetEndPoints())
        {
            var server = multiplexer.GetServer(endpoint);
            foreach (var script in Scripts)
            {
                await server.ScriptLoadAsync(script);
            }
        }
    }

    public static string EffectCounter(string effect) => $"pay:stats:effect:{effect}";

    public static string RepeatCounter(string effect) => $"pay:stats:repeats:{effect}";

    /// <summary>Naive mode: the original's synchronous claim on the request thread.</summary>
    public ClaimResult Claim(PaymentCallback callback) => ToResult(Database.ScriptEvaluate(ClaimScript, ClaimKeys(callback), ClaimArgs(callback)));

    /// <summary>Queue mode: a final claim (undone by <see cref="ReleaseAsync"/> if the queue refuses the job).</summary>
    public async Task<ClaimResult> ClaimAsync(PaymentCallback callback) =>
        ToResult(await Database.ScriptEvaluateAsync(ClaimScript, ClaimKeys(callback), ClaimArgs(callback)));

    public async Task ReleaseAsync(PaymentCallback callback) =>
        await Database.ScriptEvaluateAsync(ReleaseScript, ClaimKeys(callback), [callback.OrderId]);

    /// <summary>Durable mode, phase 1: a claim that expires unless <see cref="CommitAsync"/> follows.</summary>
    public async Task<ClaimResult> ClaimPendingAsync(PaymentCallback callback) =>
        ToResult(await Database.ScriptEvaluateAsync(ClaimPendingScript, ClaimKeys(callback), [.. ClaimArgs(callback), (long)PendingClaimTtl.TotalSeconds]));

    /// <summary>Durable mode, phase 2: the job is in Redis; the claim is final and the callback counted as accepted.</summary>
    public async Task CommitAsync(PaymentCallback callback) =>
        await Database.ScriptEvaluateAsync(CommitScript, ClaimKeys(callback), [(long)PaymentKeyTtl.TotalSeconds]);

    /// <summary>Durable mode: the job was not stored; the gateway's retry may claim the payment again.</summary>
    public async Task ReleasePendingAsync(PaymentCallback callback) =>
        await Database.ScriptEvaluateAsync(ReleasePendingScript, [PaymentKey(callback.PaymentId)]);

    /// <summary>Settles the order and publishes its payment message, each once (synchronously: callers run on background threads).</summary>
    public void SettleAndPublish(PaidOrder order)
    {
        string message = PaymentMessage(order);
        var result = (long)Database.ScriptEvaluate(
            PostPaymentScript,
            [OrderKey(order.OrderId), "pay:merchant:balance"],
            [order.Currency, order.Amount.ToString(CultureInfo.InvariantCulture), "pay:events", message]);
        if (result < 0)
        {
            throw new InvalidOperationException($"Order {order.OrderId} vanished before its post-payment work ran.");
        }
    }

    /// <summary>
    /// Asks whether a provider call for <paramref name="effect"/> is due, counting repeats; when
    /// <paramref name="returned"/> is given, first records that effect (the call that just returned) in the same round trip.
    /// </summary>
    public ProviderCall BeginProviderCall(string orderId, string effect, string? returned = null) =>
        (long)Database.ScriptEvaluate(BeginCallScript, [OrderKey(orderId)], returned is null ? [effect] : [effect, returned]) switch
        {
            0 => ProviderCall.AlreadyDone,
            1 => ProviderCall.First,
            > 1 => ProviderCall.Repeat,
            _ => throw new InvalidOperationException($"Order {orderId} vanished before its {effect} call."),
        };

    /// <summary>Records one side effect as done; <see langword="false"/> when it already was.</summary>
    public bool MarkEffect(string orderId, string effect) =>
        (long)Database.ScriptEvaluate(EffectScript, [OrderKey(orderId)], [effect]) == 1;

    public async Task<OrderView?> GetOrderAsync(string orderId)
    {
        var fields = (await Database.HashGetAllAsync(OrderKey(orderId))).ToDictionary(e => (string)e.Name!, e => (string?)e.Value);
        if (fields.Count == 0)
        {
            return null;
        }

        return new OrderView(
            orderId,
            fields.GetValueOrDefault("status") ?? "Unknown",
            Effects.ToDictionary(e => e, e => fields.GetValueOrDefault(e) == "1"));
    }

    /// <summary>The <c>pay:events</c> message, written by a JSON writer: an id can never add or change a field.</summary>
    public static string PaymentMessage(PaidOrder order)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>(128);
        using (var writer = new System.Text.Json.Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("orderId", order.OrderId);
            writer.WriteString("paymentId", order.PaymentId);
            writer.WriteNumber("amount", order.Amount);
            writer.WriteEndObject();
        }

        return System.Text.Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    private static string OrderKey(string orderId) => $"pay:order:{orderId}";

    private static string PaymentKey(string paymentId) => $"pay:payment:{paymentId}";

    private static RedisKey[] ClaimKeys(PaymentCallback c) => [PaymentKey(c.PaymentId), OrderKey(c.OrderId), StatsAccepted];

    private static RedisValue[] ClaimArgs(PaymentCallback c) =>
    [
        c.OrderId,
        c.PaymentId,
        c.Amount.ToString(CultureInfo.InvariantCulture),
        c.Currency,
        c.PaidAt.ToString("O", CultureInfo.InvariantCulture),
        (long)PaymentKeyTtl.TotalSeconds,
        c.Status switch { PaymentStatus.Success => "Paid", PaymentStatus.Failed => "Failed", _ => "Closed" },
    ];

    private static ClaimResult ToResult(RedisResult result) => (long)result switch
    {
        1 => ClaimResult.New,
        3 => ClaimResult.InProgress,
        4 => ClaimResult.DuplicateCharge,
        _ => ClaimResult.Duplicate,
    };
}

/// <summary>
/// The JSON shape of <c>GET /api/orders/{orderId}</c>: what the shop's front end may show anyone who knows the order id
/// (its status and which effects are done). The gateway's payment id is not in it: it belongs to the payment record,
/// for the merchant's back office, not to whoever can guess an order id.
/// </summary>
public sealed record OrderView(string OrderId, string Status, Dictionary<string, bool> Effects);
