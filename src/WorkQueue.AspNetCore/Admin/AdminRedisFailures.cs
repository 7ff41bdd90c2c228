using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Net.Http.Headers;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Turns a failed Redis call of an admin route into its answer: 503 with <c>Retry-After</c> when Redis could not be
/// reached or was not ready, 500 when it refused the call, never with Redis's words (its error names commands, scripts,
/// keys and addresses); the error itself is logged (event 404).
/// </summary>
internal static partial class AdminRedisFailures
{
    /// <summary>How long a client is told to wait before it retries a call Redis could not serve.</summary>
    internal const int RetryAfterSeconds = 5;

    // The error codes Redis answers while it cannot serve a call but may soon (loading, busy with a script, a failover,
    // a replica, a failed save, out of memory): unavailable, not a refusal of this call.
    private static readonly string[] TransientErrorCodes = ["LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF", "OOM"];

    /// <summary>Whether a Redis failure means Redis could not serve the call now (503), rather than that it refused it (500).</summary>
    /// <param name="exception">What the call threw.</param>
    /// <returns><see langword="true"/> for a connection failure, a timeout, or a server error whose code says Redis is not ready.</returns>
    public static bool IsUnavailable(Exception exception) => exception switch
    {
        RedisConnectionException or TimeoutException => true,
        RedisServerException server => TransientErrorCodes.Any(code => server.Message.StartsWith(code + " ", StringComparison.Ordinal)),
        _ => false,
    };

    /// <summary>Logs a failed Redis call and answers it without Redis's words.</summary>
    /// <param name="http">The request's context (the answer's <c>Retry-After</c> goes on its response).</param>
    /// <param name="queue">The durable queue the call was for.</param>
    /// <param name="exception">What the call threw.</param>
    /// <param name="what">What was done before the failure, said after the queue's name, or <see langword="null"/>.</param>
    /// <param name="extensions">The problem's extensions, or <see langword="null"/>.</param>
    /// <returns>The problem to answer.</returns>
    public static ProblemHttpResult Problem(HttpContext http, string queue, Exception exception, string? what = null, IDictionary<string, object?>? extensions = null) =>
        Answer(http, queue, exception, IsUnavailable(exception), what, extensions);

    /// <summary>Logs a job a durable queue refused because Redis could not take it, and answers 503 without the rejection's message (which quotes Redis).</summary>
    /// <param name="http">The request's context.</param>
    /// <param name="rejection">The rejection, whose reason is <see cref="RejectionReason.StoreUnavailable"/>.</param>
    /// <param name="what">What was not done, said after the queue's name.</param>
    /// <returns>The problem to answer.</returns>
    public static ProblemHttpResult StoreUnavailable(HttpContext http, JobRejectedException rejection, string what) =>
        Answer(http, rejection.QueueName, rejection, unavailable: true, what, extensions: null);

    private static ProblemHttpResult Answer(HttpContext http, string queue, Exception exception, bool unavailable, string? what, IDictionary<string, object?>? extensions)
    {
        int status = unavailable ? StatusCodes.Status503ServiceUnavailable : StatusCodes.Status500InternalServerError;
        var logger = http.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(AdminRedisFailures).Namespace!);
        Log.RedisCallFailed(logger, http.Request.Method, http.Request.Path.Value ?? string.Empty, queue, status, exception);
        string done = what is null ? string.Empty : $" {what}";
        if (unavailable)
        {
            http.Response.Headers[HeaderNames.RetryAfter] = RetryAfterSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
            return TypedResults.Problem(
                statusCode: status,
                title: "Redis unavailable",
                detail: $"Durable queue '{queue}': Redis could not be reached or was not ready.{done} Retry later; the application's log has the error (event 404).",
                extensions: extensions);
        }

        return TypedResults.Problem(
            statusCode: status,
            title: "Redis error",
            detail: $"Durable queue '{queue}': Redis refused the call.{done} The application's log has the error (event 404).",
            extensions: extensions);
    }

    private static partial class Log
    {
        [LoggerMessage(404, LogLevel.Warning, "A WorkQueue admin call ({Method} {Path}) to durable queue {Queue} failed in Redis; it was answered {StatusCode} without the error.", EventName = "AdminRedisCallFailed")]
        public static partial void RedisCallFailed(ILogger logger, string method, string path, string queue, int statusCode, Exception exception);
    }
}
