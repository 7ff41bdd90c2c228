using PayCallbackApi.PostPayment;

namespace PayCallbackApi.Callbacks;

/// <summary><c>POST /api/pay/callback</c>: verify, parse, then claim and dispatch in the mode's way; answer at once.</summary>
internal static class CallbackEndpoint
{
    private const int MaxBodyBytes = 16 * 1024;
    private static readonly object Success = new { code = "SUCCESS" };

    public static async Task<IResult> HandleAsync(
        HttpRequest request,
        SignatureVerifier signatures,
        IPostPaymentDispatcher dispatcher,
        RejectionLog rejections)
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

        switch (await dispatcher.AcceptAsync(callback!))
        {
            case Acceptance.Refused:
                // Nothing was done for this payment: the gateway's retry is processed as new.
                rejections.Record(callback!.OrderId, callback.PaymentId);
                return new RetryLaterResult(TimeSpan.FromSeconds(1), "The post-payment work could not be accepted now (queue full or store unavailable); retry this callback later.");
            case Acceptance.InProgress:
                return new RetryLaterResult(TimeSpan.FromSeconds(1), "This payment's callback is being processed by another request; retry it later.");
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
    private sealed class RetryLaterResult(TimeSpan retryAfter, string detail) : IResult
    {
        public Task ExecuteAsync(HttpContext httpContext)
        {
            httpContext.Response.Headers.RetryAfter = ((int)Math.Ceiling(retryAfter.TotalSeconds)).ToString(System.Globalization.CultureInfo.InvariantCulture);
            return TypedResults.Problem(
                statusCode: StatusCodes.Status503ServiceUnavailable,
                title: "Busy",
                detail: detail).ExecuteAsync(httpContext);
        }
    }
}
