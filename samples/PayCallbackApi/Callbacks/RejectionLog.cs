namespace PayCallbackApi.Callbacks;

/// <summary>
/// Logs the callbacks answered 503 at most once a second, with how many there were since the last line. Under
/// overload a line per rejected callback means thousands a second: the CPU they cost is what the service is short of,
/// and once the console logger's queue is full its writers (the request threads) wait for it.
/// </summary>
public sealed partial class RejectionLog
{
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly long _interval;
    private long _unlogged;
    private long _nextLine;

    public RejectionLog(ILoggerFactory loggers, TimeProvider time)
    {
        _logger = loggers.CreateLogger("PayCallbackApi.Callbacks");
        _time = time;
        _interval = time.TimestampFrequency;
        _nextLine = long.MinValue;
    }

    /// <summary>Counts one callback answered 503; writes the line when a second has passed since the last one.</summary>
    public void Record(string orderId, string paymentId)
    {
        Interlocked.Increment(ref _unlogged);
        long now = _time.GetTimestamp();
        long next = Volatile.Read(ref _nextLine);
        if (now < next || Interlocked.CompareExchange(ref _nextLine, now + _interval, next) != next)
        {
            return;
        }

        // This caller won the second: it writes the count of every rejection not yet logged, its own included.
        Log.Rejected(_logger, Interlocked.Exchange(ref _unlogged, 0), orderId, paymentId);
    }

    private static partial class Log
    {
        [LoggerMessage(10, LogLevel.Warning, "Work not accepted: {Count} callback(s) answered 503 and released for the gateway's retry since the last such line (queue full or store unavailable); the latest for order {OrderId} (payment {PaymentId}).")]
        public static partial void Rejected(ILogger logger, long count, string orderId, string paymentId);
    }
}
