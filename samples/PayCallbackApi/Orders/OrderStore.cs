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
}

/// <summary>
/// The Redis side of orders. Idempotency is one Lua script: <c>SET pay:payment:{id} NX</c> and the order update happen
/// atomically, so concurrent duplicates of a callback produce exactly one round of side effects.
/// </summary>
public sealed class OrderStore
{
    public const string StatsAccepted = "pay:stats:accepted";
    public const string StatsCompleted = "pay:stats:completed";
    public static readonly string[] Effects = ["settlement", "sms", "message", "delivery"];

    private static readonly TimeSpan PaymentKeyTtl = TimeSpan.FromDays(7);

    // KEYS: payment key, order key, accepted counter. ARGV: orderId, paymentId, amount, currency, paidAt, ttl, status.
    private const string ClaimScript = """
        if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[6]) then return 0 end
        if ARGV[7] == 'Paid' then
          redis.call('HSET', KEYS[2], 'status', 'Paid', 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5],
            'settlement', '0', 'sms', '0', 'message', '0', 'delivery', '0')
          redis.call('INCR', KEYS[3])
          return 1
        end
        if redis.call('HGET', KEYS[2], 'status') ~= 'Paid' then
          redis.call('HSET', KEYS[2], 'status', ARGV[7], 'paymentId', ARGV[2], 'amount', ARGV[3], 'currency', ARGV[4], 'paidAt', ARGV[5])
        end
        return 2
        """;

    // KEYS: payment key, order key, accepted counter. ARGV: orderId.
    private const string ReleaseScript = """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        redis.call('DEL', KEYS[1], KEYS[2])
        redis.call('DECR', KEYS[3])
        return 1
        """;

    // KEYS: order key, effect counter, completed counter. ARGV: effect field. Counts only the 0 -> 1 transition, so a
    // retried step never counts twice, and exactly the step that completes the set counts the order as completed.
    private const string EffectScript = """
        if redis.call('HGET', KEYS[1], ARGV[1]) ~= '0' then return 0 end
        redis.call('HSET', KEYS[1], ARGV[1], '1')
        redis.call('INCR', KEYS[2])
        local v = redis.call('HMGET', KEYS[1], 'settlement', 'sms', 'message', 'delivery')
        if v[1] == '1' and v[2] == '1' and v[3] == '1' and v[4] == '1' then redis.call('INCR', KEYS[3]) end
        return 1
        """;

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
            foreach (var script in new[] { ClaimScript, ReleaseScript, EffectScript })
            {
                await server.ScriptLoadAsync(script);
            }
        }
    }

    public static string EffectCounter(string effect) => $"pay:stats:effect:{effect}";

    public ClaimResult Claim(PaymentCallback callback) => ToResult(Database.ScriptEvaluate(ClaimScript, ClaimKeys(callback), ClaimArgs(callback)));

    public async Task<ClaimResult> ClaimAsync(PaymentCallback callback) =>
        ToResult(await Database.ScriptEvaluateAsync(ClaimScript, ClaimKeys(callback), ClaimArgs(callback)));

    public async Task ReleaseAsync(PaymentCallback callback) =>
        await Database.ScriptEvaluateAsync(ReleaseScript, ClaimKeys(callback), [callback.OrderId]);

    /// <summary>Records one side effect as done (synchronously: callers run on background threads).</summary>
    public bool MarkEffect(string orderId, string effect) =>
        (long)Database.ScriptEvaluate(EffectScript, [OrderKey(orderId), EffectCounter(effect), StatsCompleted], [effect]) == 1;

    public HashEntry[] LoadOrder(string orderId) => Database.HashGetAll(OrderKey(orderId));

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
            fields.GetValueOrDefault("paymentId"),
            Effects.ToDictionary(e => e, e => fields.GetValueOrDefault(e) == "1"));
    }

    public void PublishPayment(PaidOrder order) =>
        Database.Publish(RedisChannel.Literal("pay:events"), $"{{\"orderId\":\"{order.OrderId}\",\"paymentId\":\"{order.PaymentId}\",\"amount\":{order.Amount.ToString(CultureInfo.InvariantCulture)}}}");

    public void AddToMerchantBalance(PaidOrder order) =>
        Database.HashIncrement("pay:merchant:balance", order.Currency, (double)order.Amount);

    private static string OrderKey(string orderId) => $"pay:order:{orderId}";

    private static RedisKey[] ClaimKeys(PaymentCallback c) => [$"pay:payment:{c.PaymentId}", OrderKey(c.OrderId), StatsAccepted];

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

    private static ClaimResult ToResult(RedisResult result) => (long)result == 1 ? ClaimResult.New : ClaimResult.Duplicate;
}

/// <summary>The JSON shape of <c>GET /api/orders/{orderId}</c>.</summary>
public sealed record OrderView(string OrderId, string Status, string? PaymentId, Dictionary<string, bool> Effects);
