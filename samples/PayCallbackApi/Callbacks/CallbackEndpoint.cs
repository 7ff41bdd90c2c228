using Microsoft.Extensions.Options;
using PayCallbackApi.Orders;
using PayCallbackApi.PostPayment;

namespace PayCallbackApi.Callbacks;

/// <summary><c>POST /api/pay/callback</c>: verify, claim atomically, dispatch, answer at once.</summary>
internal static partial class CallbackEndpoint
{
    private const int MaxBodyBytes = 16 * 1024;
    private static readonly object Success = new { code = "SUCCESS" };

    public static async Task<IResult> HandleAsync(
        HttpRequest request,
        SignatureVerifier signatures,
        OrderStore orders,
        IPostPaymentDispatcher dispatcher,
        IOptions<PayCallbackOptions> options,
        ILoggerFactory loggers)
    {
        var body = await ReadBodyAsync(request);
        if (body is null)
        {
            return Invalid("body", $"The body must be at most {MaxBodyBytes} bytes.");
        }

        if (!signatures.IsValid(request.Headers[SignatureVerifier.Header].ToString() is { Length: > 0 } header ? header : null, body))
        {
            return TypedResults.Problem(
                statusCode: StatusCodes.Status401Unauthorized,
                title: "Invalid signature",
                detail: $"{SignatureVerifier.Header} must be sha256=<lowercase hex HMAC-SHA256 of the raw body>.");
        }

        if (!CallbackParser.TryParse(body, out var callback, out var field, out var error))
        {
            return Invalid(field, error);
        }

        // Naive keeps the original's synchronous Redis call on the request thread; Queue awaits it.
        var claim = options.Value.Mode == ProcessingMode.Naive ? orders.Claim(callback!) : await orders.ClaimAsync(callback!);
        if (claim == ClaimResult.Duplicate || callback!.Status != PaymentStatus.Success)
        {
            return TypedResults.Ok(Success);
        }

        var order = new PaidOrder(callback.OrderId, callback.PaymentId, callback.Amount, callback.Currency);
        if (!dispatcher.TryDispatch(order))
        {
            // Nothing was done for this payment yet: release it so the gateway's retry is processed as new.
            await orders.ReleaseAsync(callback);
            Log.Rejected(loggers.CreateLogger("PayCallbackApi.Callbacks"), callback.OrderId, callback.PaymentId);
            return new RetryLaterResult(TimeSpan.FromSeconds(1));
        }

        return TypedResults.Ok(Success);
    }

    private static async Task<byte[]?> ReadBodyAsync(HttpRequest request)
    {
        using var buffer = new MemoryStream();
        var chunk = new byte[4096];
        int read;
        while ((read = await request.Body.ReadAsync(chunk, request.HttpContext.RequestAborted)) > 0)
        {
            if (buffer.Length + read > MaxBodyBytes)
            {
                return null;
            }

            buffer.Write(chunk, 0, read);
        }

        return buffer.ToArray();
    }

    private static IResult Invalid(string field, string message) =>
        TypedResults.ValidationProblem(new Dictionary<string, string[]> { [field] = [message] }, detail: message, title: $"Invalid '{field}'.");

    /// <summary>503 with <c>Retry-After</c> and a problem body.</summary>
    private sealed class RetryLaterResult(TimeSpan retryAfter) : IResult
    {
        public Task ExecuteAsync(HttpContext httpContext)
        {
            httpContext.Response.Headers.RetryAfter = ((int)Math.Ceiling(retryAfter.TotalSeconds)).ToString(System.Globalization.CultureInfo.InvariantCulture);
            return TypedResults.Problem(
                statusCode: StatusCodes.Status503ServiceUnavailable,
                title: "Busy",
                detail: "The post-payment queue is full; retry this callback later.").ExecuteAsync(httpContext);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(10, LogLevel.Warning, "Queue full: callback for order {OrderId} (payment {PaymentId}) answered 503 and released for the gateway's retry.")]
        public static partial void Rejected(ILogger logger, string orderId, string paymentId);
    }
}
