using System.Globalization;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Dashboard;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>The admin route handlers.</summary>
internal static class AdminEndpoints
{
    public static Ok<QueueState[]> GetAll(IWorkQueueProvider queues) =>
        TypedResults.Ok(queues.Queues.Select(q => AdminResponses.FromSnapshot(q.GetSnapshot())).ToArray());

    public static Results<Ok<QueueState>, ProblemHttpResult> GetOne(string queue, IWorkQueueProvider queues) =>
        queues.TryGetControl(queue, out var q) ? TypedResults.Ok(AdminResponses.FromSnapshot(q.GetSnapshot())) : UnknownQueue(queue);

    public static Results<Ok<DepthState>, ProblemHttpResult> GetDepth(string queue, IWorkQueueProvider queues)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        var snapshot = q.GetSnapshot();
        return TypedResults.Ok(new DepthState(q.Name, snapshot.Depth, snapshot.Capacity));
    }

    public static Results<Ok<WorkersState>, ProblemHttpResult> GetWorkers(string queue, IWorkQueueProvider queues) =>
        queues.TryGetControl(queue, out var q) ? TypedResults.Ok(AdminResponses.WorkersFrom(q.GetSnapshot())) : UnknownQueue(queue);

    public static async Task<Results<Ok<WorkersState>, ValidationProblem, ProblemHttpResult>> PutWorkers(string queue, HttpRequest request, IWorkQueueProvider queues)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        using var buffer = new MemoryStream();
        await request.Body.CopyToAsync(buffer, request.HttpContext.RequestAborted).ConfigureAwait(false);
        var bytes = buffer.GetBuffer().AsMemory(0, (int)buffer.Length);
        if (bytes.Span.Trim(" \t\r\n"u8).IsEmpty)
        {
            return Invalid("body", "A JSON body is required: {\"count\": n} or {\"mode\": \"auto\"}.");
        }

        JsonElement body;
        try
        {
            using var document = JsonDocument.Parse(bytes);
            body = document.RootElement.Clone();
        }
        catch (JsonException ex)
        {
            return Invalid("body", $"The body is not valid JSON: {ex.Message}");
        }

        if (body.ValueKind != JsonValueKind.Object)
        {
            return Invalid("body", "The body must be a JSON object: {\"count\": n} or {\"mode\": \"auto\"}.");
        }

        bool hasCount = TryGetProperty(body, "count", out var count);
        bool hasMode = TryGetProperty(body, "mode", out var mode);
        int max = q.GetSnapshot().MaxWorkers;
        if (hasMode)
        {
            string? modeText = mode.ValueKind == JsonValueKind.String ? mode.GetString() : null;
            if (string.Equals(modeText, "auto", StringComparison.OrdinalIgnoreCase))
            {
                if (hasCount)
                {
                    return Invalid("count", "\"count\" cannot be combined with \"mode\": \"auto\"; the autoscaler decides the count.");
                }

                q.UseAutoScaling();
                return TypedResults.Ok(AdminResponses.WorkersFrom(q.GetSnapshot()));
            }

            if (!string.Equals(modeText, "manual", StringComparison.OrdinalIgnoreCase))
            {
                return Invalid("mode", "\"mode\" must be \"auto\" or \"manual\".");
            }

            if (!hasCount)
            {
                return Invalid("count", "\"mode\": \"manual\" needs a \"count\".");
            }
        }

        if (!hasCount)
        {
            return Invalid("body", "The body must contain \"count\" (a manual worker count) or \"mode\": \"auto\".");
        }

        if (count.ValueKind != JsonValueKind.Number || !count.TryGetInt32(out int n))
        {
            return Invalid("count", $"\"count\" must be an integer from 1 to {max}.");
        }

        if (n < 1 || n > max)
        {
            return Invalid("count", $"\"count\" must be from 1 to {max} (the queue's MaxWorkers); it was {n}.");
        }

        q.SetWorkerCount(n);
        return TypedResults.Ok(AdminResponses.WorkersFrom(q.GetSnapshot()));
    }

    public static Results<Ok<PauseState>, ProblemHttpResult> Pause(string queue, IWorkQueueProvider queues)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        q.Pause();
        return TypedResults.Ok(new PauseState(q.Name, Paused: true));
    }

    public static Results<Ok<PauseState>, ProblemHttpResult> Resume(string queue, IWorkQueueProvider queues)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        q.Resume();
        return TypedResults.Ok(new PauseState(q.Name, Paused: false));
    }

    public static Results<Ok<DeadLetterState[]>, ProblemHttpResult> GetDeadLetters(string queue, IWorkQueueProvider queues) =>
        queues.TryGetControl(queue, out var q)
            ? TypedResults.Ok(q.GetDeadLetters().Select(AdminResponses.FromDeadLetter).ToArray())
            : UnknownQueue(queue);

    public static Results<Ok<HistoryState>, ValidationProblem, ProblemHttpResult> GetHistory(string? since, IWorkQueueProvider queues, HttpContext http)
    {
        if (http.RequestServices.GetService<DashboardHistory>() is not { } history)
        {
            return TypedResults.Problem(
                statusCode: StatusCodes.Status404NotFound,
                title: "No history",
                detail: "Queue history is kept only when 'services.AddWorkQueueDashboard()' is called.");
        }

        var after = DateTimeOffset.MinValue;
        if (since is not null)
        {
            if (!long.TryParse(since, NumberStyles.None, CultureInfo.InvariantCulture, out long ms) || ms > DateTimeOffset.MaxValue.ToUnixTimeMilliseconds())
            {
                return Invalid("since", $"\"since\" must be a time in Unix milliseconds (a whole number from 0); it was '{since}'.");
            }

            after = DateTimeOffset.FromUnixTimeMilliseconds(ms);
        }

        var result = queues.Queues
            .Select(q => new HistoryQueue(q.Name, history.Find(q.Name)?.After(after).Select(AdminResponses.FromSample).ToArray() ?? []))
            .ToArray();
        return TypedResults.Ok(new HistoryState((int)DashboardHistory.Interval.TotalMilliseconds, result));
    }

    private static bool TryGetProperty(JsonElement body, string name, out JsonElement value)
    {
        foreach (var property in body.EnumerateObject())
        {
            if (string.Equals(property.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                value = property.Value;
                return true;
            }
        }

        value = default;
        return false;
    }

    private static ValidationProblem Invalid(string field, string message) =>
        TypedResults.ValidationProblem(
            new Dictionary<string, string[]> { [field] = [message] },
            detail: message,
            title: $"Invalid '{field}'.");

    private static ProblemHttpResult UnknownQueue(string queue) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown queue", detail: $"No WorkQueue queue is named '{queue}'.");
}
