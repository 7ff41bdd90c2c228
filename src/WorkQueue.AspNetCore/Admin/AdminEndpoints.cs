using System.Globalization;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Dashboard;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>The admin route handlers.</summary>
internal static class AdminEndpoints
{
    /// <summary>The most dead letters one call lists.</summary>
    private const int DeadLetterPage = 100;

    public static Ok<QueueState[]> GetAll(IWorkQueueProvider queues, HttpContext http) =>
        TypedResults.Ok(queues.Queues.Select(q => AdminResponses.FromSnapshot(q.GetSnapshot(), FindDurable(http, q.Name))).ToArray());

    public static Results<Ok<QueueState>, ProblemHttpResult> GetOne(string queue, IWorkQueueProvider queues, HttpContext http) =>
        queues.TryGetControl(queue, out var q) ? TypedResults.Ok(AdminResponses.FromSnapshot(q.GetSnapshot(), FindDurable(http, q.Name))) : UnknownQueue(queue);

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

    public static async Task<Results<Ok<DeadLetterState[]>, Ok<DurableDeadLetterState[]>, ProblemHttpResult>> GetDeadLetters(string queue, IWorkQueueProvider queues, HttpContext http)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        if (FindDurable(http, q.Name) is { } durable)
        {
            try
            {
                var letters = await durable.Jobs.ReadDeadLettersAsync(DeadLetterPage).ConfigureAwait(false);
                return TypedResults.Ok(letters.Select(AdminResponses.FromDurableDeadLetter).ToArray());
            }
            catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
            {
                return AdminRedisFailures.Problem(http, q.Name, ex);
            }
        }

        return TypedResults.Ok(q.GetDeadLetters().Select(AdminResponses.FromDeadLetter).ToArray());
    }

    public static async Task<Results<Ok<RequeuedState>, ProblemHttpResult>> RequeueDeadLetter(string queue, string id, IWorkQueueProvider queues, HttpContext http)
    {
        if (FindDeadLetterJobs(queue, id, queues, http, out string name, out var jobs) is { } problem)
        {
            return problem;
        }

        try
        {
            var requeue = await jobs!.RequeueDeadLetterAsync(id).ConfigureAwait(false);
            return requeue switch
            {
                { NewId: { } newId } => TypedResults.Ok(new RequeuedState(name, id, newId)),
                { QueueFull: true } => QueueFull(name, id, jobs, http),
                _ => UnknownDeadLetter(name, id),
            };
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            return AdminRedisFailures.Problem(http, name, ex);
        }
    }

    public static async Task<Results<NoContent, ProblemHttpResult>> DeleteDeadLetter(string queue, string id, IWorkQueueProvider queues, HttpContext http)
    {
        if (FindDeadLetterJobs(queue, id, queues, http, out string name, out var jobs) is { } problem)
        {
            return problem;
        }

        try
        {
            return await jobs!.DeleteDeadLetterAsync(id).ConfigureAwait(false) ? TypedResults.NoContent() : UnknownDeadLetter(name, id);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            return AdminRedisFailures.Problem(http, name, ex);
        }
    }

    /// <summary>The most dead letters one bulk call acts on.</summary>
    internal const int MaxBulkDeadLetters = 1_000;

    // The body is read by the handler, not bound: a [FromBody] parameter makes routing answer 415 for another content
    // type before the endpoint's access checks run (its inferred IAcceptsMetadata), and binding parses the body first.
    public static Task<Results<Ok<DeadLetterBatchState>, ValidationProblem, ProblemHttpResult>> RequeueDeadLetters(string queue, IWorkQueueProvider queues, HttpContext http) =>
        ActOnDeadLettersAsync(queue, queues, http, "requeue", async (jobs, id) =>
            await jobs.RequeueDeadLetterAsync(id).ConfigureAwait(false) switch
            {
                { NewId: { } newId } => new DeadLetterBatchItem(id, "requeued", newId),
                { QueueFull: true } => new DeadLetterBatchItem(id, QueueFullOutcome, null),
                _ => new DeadLetterBatchItem(id, "not-found", null),
            });

    public static Task<Results<Ok<DeadLetterBatchState>, ValidationProblem, ProblemHttpResult>> DeleteDeadLetters(string queue, IWorkQueueProvider queues, HttpContext http) =>
        ActOnDeadLettersAsync(queue, queues, http, "delete", async (jobs, id) =>
            new DeadLetterBatchItem(id, await jobs.DeleteDeadLetterAsync(id).ConfigureAwait(false) ? "deleted" : "not-found", null));

    /// <summary>
    /// Requeues or deletes up to <see cref="MaxBulkDeadLetters"/> dead letters of a durable queue, one by one (each its
    /// own atomic step, as the single routes), and answers each one's outcome. Every id is checked before any is acted
    /// on; a Redis failure midway answers 503 (or 500, see <see cref="AdminRedisFailures"/>) with what was done so far in
    /// the problem's <c>done</c>.
    /// </summary>
    private static async Task<Results<Ok<DeadLetterBatchState>, ValidationProblem, ProblemHttpResult>> ActOnDeadLettersAsync(
        string queue, IWorkQueueProvider queues, HttpContext http, string action, Func<RedisJobBrowser, string, Task<DeadLetterBatchItem>> act)
    {
        if (FindDurableJobs(queue, queues, http, out string name, out var jobs) is { } problem)
        {
            return problem;
        }

        JsonElement body;
        try
        {
            using var document = await JsonDocument.ParseAsync(http.Request.Body, default, http.RequestAborted).ConfigureAwait(false);
            body = document.RootElement.Clone();
        }
        catch (JsonException ex)
        {
            return Invalid("body", $"The body is not valid JSON: {ex.Message}");
        }

        if (body.ValueKind != JsonValueKind.Object)
        {
            return Invalid("body", "The body must be a JSON object: {\"ids\": [\"1732500000000-0\", ...]}.");
        }

        JsonElement[] items = TryGetProperty(body, "ids", out var list) && list.ValueKind == JsonValueKind.Array ? [.. list.EnumerateArray()] : [];
        if (items.Length == 0 || items.Length > MaxBulkDeadLetters)
        {
            return Invalid("ids", $"\"ids\" must list 1 to {MaxBulkDeadLetters} dead-letter ids; it listed {items.Length}.");
        }

        int badAt = Array.FindIndex(items, id => id.ValueKind != JsonValueKind.String || !IsStreamId(id.GetString()!));
        if (badAt >= 0)
        {
            string sent = items[badAt].ValueKind == JsonValueKind.String ? items[badAt].GetString()! : items[badAt].GetRawText();
            return Invalid("ids", $"\"ids\" must hold dead-letter ids such as 1732500000000-0; '{sent}' is not one.");
        }

        string[] ids = [.. items.Select(id => id.GetString()!)];
        var results = new List<DeadLetterBatchItem>(ids.Length);
        try
        {
            foreach (string id in ids.Distinct(StringComparer.Ordinal))
            {
                results.Add(await act(jobs!, id).ConfigureAwait(false));
            }
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            return AdminRedisFailures.Problem(
                http,
                name,
                ex,
                $"It failed after {results.Count} of the dead letters; 'done' lists those; retry the rest.",
                new Dictionary<string, object?> { ["done"] = results });
        }

        int full = results.Count(r => r.Outcome == QueueFullOutcome);
        if (full > 0)
        {
            http.Response.Headers.RetryAfter = RequeueRetryAfterSeconds;
        }

        return TypedResults.Ok(new DeadLetterBatchState(name, action, results.Count - full - results.Count(r => r.Outcome == "not-found"), results.Count(r => r.Outcome == "not-found"), full, [.. results]));
    }

    /// <summary>The most scheduled jobs one call lists by default, and at most.</summary>
    private const int ScheduledPage = 100;
    private const int MaxScheduledPage = 1_000;

    public static async Task<Results<Ok<ScheduledJobState[]>, ValidationProblem, ProblemHttpResult>> GetScheduled(string queue, string? limit, IWorkQueueProvider queues, HttpContext http)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        int count = ScheduledPage;
        if (limit is not null && (!int.TryParse(limit, NumberStyles.None, CultureInfo.InvariantCulture, out count) || count < 1 || count > MaxScheduledPage))
        {
            return Invalid("limit", $"\"limit\" must be a whole number from 1 to {MaxScheduledPage}; it was '{limit}'.");
        }

        if (FindDurable(http, q.Name) is { } durable)
        {
            try
            {
                var jobs = await durable.Jobs.ListScheduledAsync(count).ConfigureAwait(false);
                return TypedResults.Ok(jobs.Select(j => new ScheduledJobState(j.Id, j.Name, j.DueAt, j.ScheduledAt)).ToArray());
            }
            catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
            {
                return AdminRedisFailures.Problem(http, q.Name, ex);
            }
        }

        return TypedResults.Ok(q.GetScheduledJobs(count).Select(AdminResponses.FromScheduled).ToArray());
    }

    public static async Task<Results<NoContent, ValidationProblem, ProblemHttpResult>> CancelScheduled(string queue, string id, IWorkQueueProvider queues, HttpContext http)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        bool cancelled;
        if (FindDurable(http, q.Name) is { } durable)
        {
            if (!StreamIdGrammar.IsJobId(id))
            {
                return InvalidDurableJobId(id);
            }

            try
            {
                cancelled = await durable.Jobs.CancelScheduledAsync(id).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
            {
                return AdminRedisFailures.Problem(http, q.Name, ex);
            }
        }
        else if (long.TryParse(id, NumberStyles.None, CultureInfo.InvariantCulture, out long jobId))
        {
            cancelled = await queues.GetQueue(q.Name).CancelScheduledAsync(id, http.RequestAborted).ConfigureAwait(false);
        }
        else
        {
            return InvalidJobId(id);
        }

        return cancelled
            ? TypedResults.NoContent()
            : TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown scheduled job", detail: $"Queue '{q.Name}' holds no scheduled job '{id}': the id is unknown, or the job came due (it ran or runs), or it was cancelled.");
    }

    public static async Task<Results<Ok<JobStatusState>, Ok<DurableJobStatusState>, ValidationProblem, ProblemHttpResult>> GetJob(string queue, string id, IWorkQueueProvider queues, HttpContext http)
    {
        if (FindJobQueue(queue, id, queues, http, out var q, out long jobId, out var durable) is { } problem)
        {
            return problem;
        }

        if (durable is not null)
        {
            if (!StreamIdGrammar.IsJobId(id))
            {
                return InvalidDurableJobId(id);
            }

            try
            {
                return await durable.GetJobAsync(id).ConfigureAwait(false) is { } found
                    ? TypedResults.Ok(AdminResponses.FromJob(found, found.Name))
                    : UnknownDurableJob(q!.Name, id);
            }
            catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
            {
                return AdminRedisFailures.Problem(http, q!.Name, ex);
            }
        }

        if (jobId < 0)
        {
            return InvalidJobId(id);
        }

        return await queues.GetQueue(q!.Name).GetJobAsync(id, http.RequestAborted).ConfigureAwait(false) is { } job
            ? TypedResults.Ok(AdminResponses.FromJob(job, Settings(http)))
            : UnknownJob(q.Name, id);
    }

    /// <summary>
    /// Searches an in-memory queue's tracked jobs: <c>?state=</c> (one or more of the JSON state names, comma-separated),
    /// <c>type=</c> (text in the job's name), <c>error=</c> (text in its last error), <c>cursor=</c> (a page's
    /// <c>next</c>) and <c>limit=</c> (1 to 500, default 50). 400 naming the field for a bad one.
    /// </summary>
    public static async Task<Results<Ok<JobPageState>, Ok<DurableJobPageState>, ValidationProblem, ProblemHttpResult>> FindJobs(string queue, IWorkQueueProvider queues, HttpContext http)
    {
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        var request = http.Request.Query;
        var states = new List<JobState>();
        foreach (string? part in request["state"].SelectMany(v => (v ?? string.Empty).Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)))
        {
            if (AdminResponses.ParseJobState(part) is not { } state)
            {
                return Invalid("state", $"\"state\" must be one or more of {string.Join(", ", Enum.GetValues<JobState>().Select(AdminResponses.ToJson))}, comma-separated; it was '{part}'.");
            }

            states.Add(state);
        }

        int limit = 50;
        if (request["limit"] is { Count: > 0 } limitText
            && (!int.TryParse(limitText.ToString(), NumberStyles.None, CultureInfo.InvariantCulture, out limit) || limit is < 1 or > JobQuery.MaxLimit))
        {
            return Invalid("limit", $"\"limit\" must be a whole number from 1 to {JobQuery.MaxLimit}; it was '{limitText}'.");
        }

        string? type = Text(request["type"]);
        string? error = Text(request["error"]);
        foreach (var (field, text) in new[] { ("type", type), ("error", error) })
        {
            if (text is { Length: > JobQuery.MaxTextLength })
            {
                return Invalid(field, $"\"{field}\" must be at most {JobQuery.MaxTextLength} characters; it was {text.Length}.");
            }
        }

        string? cursor = Text(request["cursor"]);
        if (FindDurable(http, q.Name) is { } durable)
        {
            return await FindDurableJobsAsync(http, q.Name, durable.Jobs, states, type, error, cursor, limit).ConfigureAwait(false);
        }

        var query = new JobQuery { States = states, NameContains = type, ErrorContains = error, Cursor = cursor, Limit = limit };
        JobPage page;
        try
        {
            page = await queues.GetQueue(q.Name).FindJobsAsync(query, http.RequestAborted).ConfigureAwait(false);
        }
        catch (ArgumentException) when (cursor is not null)
        {
            return Invalid("cursor", $"\"cursor\" must be a page's \"next\", as this route returned it; it was '{cursor}'.");
        }

        var settings = Settings(http);
        return TypedResults.Ok(new JobPageState(
            page.Jobs.Select(j => AdminResponses.FromJob(j, settings)).ToArray(),
            page.Next,
            page.Scanned,
            settings is { ShowPayloads: true }));

        static string? Text(Microsoft.Extensions.Primitives.StringValues value) =>
            string.IsNullOrWhiteSpace(value.ToString()) ? null : value.ToString().Trim();
    }

    /// <summary>
    /// Cancels a job by id: 200 with what happened (<c>canceled</c>: it was queued, scheduled or retrying and will not run;
    /// <c>cancelRequested</c>: it runs and its token was cancelled), 409 when it had already ended (the body says how),
    /// 404 when the queue knows no such job.
    /// </summary>
    public static async Task<Results<Ok<JobCancelState>, Ok<DurableJobCancelState>, ValidationProblem, ProblemHttpResult>> CancelJob(string queue, string id, IWorkQueueProvider queues, HttpContext http)
    {
        if (FindJobQueue(queue, id, queues, http, out var q, out long jobId, out var durable) is { } problem)
        {
            return problem;
        }

        if (durable is not null)
        {
            return await CancelDurableJobAsync(q!.Name, id, durable, http).ConfigureAwait(false);
        }

        if (jobId < 0)
        {
            return InvalidJobId(id);
        }

        var result = await queues.GetQueue(q!.Name).CancelAsync(id, http.RequestAborted).ConfigureAwait(false);
        return result switch
        {
            { Outcome: JobCancelOutcome.NotFound } or { Job: null } => UnknownJob(q.Name, id),
            { Outcome: JobCancelOutcome.AlreadyFinished, Job: { } job } => TypedResults.Problem(
                statusCode: StatusCodes.Status409Conflict,
                title: "Job already ended",
                detail: $"Job {job.Id} of queue '{q.Name}' had already ended ({AdminResponses.ToJson(job.State)}); nothing was cancelled.",
                extensions: new Dictionary<string, object?> { ["job"] = AdminResponses.FromJob(job, Settings(http)) }),
            { Job: { } job } => TypedResults.Ok(new JobCancelState(AdminResponses.ToJson(result.Outcome), AdminResponses.FromJob(job, Settings(http)))),
        };
    }

    /// <summary>
    /// Cancels a durable job by id (see <see cref="IWorkQueue.CancelAsync(string, CancellationToken)"/>):
    /// 200 <c>canceled</c> or <c>cancelRequested</c> (with the consumer that holds it), 409 when it had already ended, 404
    /// when Redis knows no such job, 503 when Redis cannot be reached.
    /// </summary>
    private static async Task<Results<Ok<JobCancelState>, Ok<DurableJobCancelState>, ValidationProblem, ProblemHttpResult>> CancelDurableJobAsync(string queue, string id, RedisJobBrowser jobs, HttpContext http)
    {
        if (!StreamIdGrammar.IsJobId(id))
        {
            return InvalidDurableJobId(id);
        }

        JobCancelResult result;
        try
        {
            result = await jobs.CancelAsync(id).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            return AdminRedisFailures.Problem(http, queue, ex);
        }

        return result switch
        {
            { Outcome: JobCancelOutcome.NotFound } or { Job: null } => UnknownDurableJob(queue, id),
            { Outcome: JobCancelOutcome.AlreadyFinished, Job: { } job } => TypedResults.Problem(
                statusCode: StatusCodes.Status409Conflict,
                title: "Job already ended",
                detail: $"Job {job.Id} of queue '{queue}' had already ended ({AdminResponses.ToJson(job.State)}); nothing was cancelled.",
                extensions: new Dictionary<string, object?> { ["job"] = AdminResponses.FromJob(job, job.Name) }),
            { Job: { } job } => TypedResults.Ok(new DurableJobCancelState(AdminResponses.ToJson(result.Outcome), AdminResponses.FromJob(job, job.Name))),
        };
    }

    public static Ok<ThreadPoolState> GetThreadPool(IThreadPoolCanary canary)
    {
        var h = canary.GetHealth();
        return TypedResults.Ok(new ThreadPoolState(h.Lag.TotalMilliseconds, h.MaxLag.TotalMilliseconds, h.IsStarving, h.StarvingSince, h.ThreadCount, h.PendingWorkItems, h.IsEnabled));
    }

    public static Ok<RecurringJobState[]> GetRecurring(HttpContext http) =>
        TypedResults.Ok(http.RequestServices.GetService<IRecurringJobs>()?.GetAll().Select(AdminResponses.FromRecurring).ToArray() ?? []);

    public static async Task<Results<Ok<TriggeredState>, ProblemHttpResult>> TriggerRecurring(string id, HttpContext http)
    {
        if (http.RequestServices.GetService<IRecurringJobs>() is not { } jobs)
        {
            return UnknownRecurring(id);
        }

        try
        {
            return await jobs.TriggerNowAsync(id, http.RequestAborted).ConfigureAwait(false) is { } jobId
                ? TypedResults.Ok(new TriggeredState(jobs.Find(id)?.Id ?? id, jobId))
                : UnknownRecurring(id);
        }
        catch (JobRejectedException ex) when (ex.Reason == RejectionReason.StoreUnavailable)
        {
            // A durable queue's rejection quotes Redis's error: logged, not answered.
            return AdminRedisFailures.StoreUnavailable(http, ex, "The occurrence was not enqueued.");
        }
        catch (JobRejectedException ex)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "Not enqueued", detail: ex.Message);
        }
    }

    public static Results<Ok<RecurringJobState>, ProblemHttpResult> PauseRecurring(string id, HttpContext http) =>
        ChangeRecurring(id, http, static (jobs, id) => jobs.Pause(id));

    public static Results<Ok<RecurringJobState>, ProblemHttpResult> ResumeRecurring(string id, HttpContext http) =>
        ChangeRecurring(id, http, static (jobs, id) => jobs.Resume(id));

    public static Results<NoContent, ProblemHttpResult> RemoveRecurring(string id, HttpContext http) =>
        http.RequestServices.GetService<IRecurringJobs>() is { } jobs && jobs.Remove(id) ? TypedResults.NoContent() : UnknownRecurring(id);

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

    private static Results<Ok<RecurringJobState>, ProblemHttpResult> ChangeRecurring(string id, HttpContext http, Func<IRecurringJobs, string, bool> change) =>
        http.RequestServices.GetService<IRecurringJobs>() is { } jobs && change(jobs, id) && jobs.Find(id) is { } info
            ? TypedResults.Ok(AdminResponses.FromRecurring(info))
            : UnknownRecurring(id);

    private static ProblemHttpResult UnknownRecurring(string id) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown recurring job", detail: $"No recurring job has the id '{id}'.");

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

    /// <summary>
    /// Whether <paramref name="id"/> is a complete stream id (<c>ms-seq</c>), as the dead-letter list gives them. Redis
    /// reads anything else differently per command: <c>1712345678901</c> is a range in XRANGE and <c>1712345678901-0</c>
    /// in XDEL (so a requeue could run one entry and delete another), and a malformed id is a server error.
    /// </summary>
    private static bool IsStreamId(string id) => StreamIdGrammar.IsStreamId(id);

    private static ValidationProblem Invalid(string field, string message) =>
        TypedResults.ValidationProblem(
            new Dictionary<string, string[]> { [field] = [message] },
            detail: message,
            title: $"Invalid '{field}'.");

    /// <summary>
    /// Finds the reading of the durable queue that holds a dead letter, or the problem to answer instead: 404 for an unknown
    /// queue, 400 for an in-memory one, 404 for an id that is not a complete stream id.
    /// </summary>
    private static ProblemHttpResult? FindDeadLetterJobs(string queue, string id, IWorkQueueProvider queues, HttpContext http, out string name, out RedisJobBrowser? jobs)
    {
        if (FindDurableJobs(queue, queues, http, out name, out jobs) is { } problem)
        {
            return problem;
        }

        if (!IsStreamId(id))
        {
            jobs = null;
            return UnknownDeadLetter(name, id);
        }

        return null;
    }

    /// <summary>Finds the reading of a durable queue's jobs, or the problem to answer instead: 404 for an unknown queue, 400 naming <c>queue</c> for an in-memory one.</summary>
    private static ProblemHttpResult? FindDurableJobs(string queue, IWorkQueueProvider queues, HttpContext http, out string name, out RedisJobBrowser? jobs)
    {
        name = queue;
        jobs = null;
        if (!queues.TryGetControl(queue, out var q))
        {
            return UnknownQueue(queue);
        }

        name = q.Name;
        if (FindDurable(http, q.Name) is not { } durable)
        {
            return NotDurable(q.Name);
        }

        jobs = durable.Jobs;
        return null;
    }

    /// <summary>
    /// Finds the queue whose job is asked for, or the problem to answer instead (404 for an unknown queue): a durable
    /// queue's jobs in Redis, or for an in-memory queue the id parsed (-1 when it is not a job id).
    /// </summary>
    private static ProblemHttpResult? FindJobQueue(string queue, string id, IWorkQueueProvider queues, HttpContext http, out IWorkQueueControl? control, out long jobId, out RedisJobBrowser? durable)
    {
        jobId = -1;
        durable = null;
        if (!queues.TryGetControl(queue, out control))
        {
            return UnknownQueue(queue);
        }

        if (FindDurable(http, control.Name) is { } found)
        {
            durable = found.Jobs;
            return null;
        }

        if (long.TryParse(id, NumberStyles.None, CultureInfo.InvariantCulture, out long parsed))
        {
            jobId = parsed;
        }

        return null;
    }

    /// <summary>
    /// Searches a durable queue's jobs in Redis (see <see cref="RedisJobBrowser.FindJobsAsync"/>): <c>type=</c> is
    /// found in the job type's name, <c>error=</c> in the last error (both ASCII case-insensitive). Text search examines at
    /// most <see cref="DurableSearchScanLimit"/> entries per page. 400 naming <c>cursor</c> for one that is not a page's
    /// <c>next</c> (checked before Redis sees it), 503 when Redis cannot be reached (without Redis's text), and 503 with
    /// <c>Retry-After: 1</c> when this queue already runs <see cref="RedisJobBrowser.MaxConcurrentSearches"/> searches here.
    /// </summary>
    private static async Task<Results<Ok<JobPageState>, Ok<DurableJobPageState>, ValidationProblem, ProblemHttpResult>> FindDurableJobsAsync(
        HttpContext http, string queue, RedisJobBrowser jobs, List<JobState> states, string? type, string? error, string? cursor, int limit)
    {
        if (cursor is not null && !RedisJobBrowser.IsSearchCursor(cursor))
        {
            return Invalid("cursor", $"\"cursor\" must be a page's \"next\", as this route returned it; it was '{cursor}'.");
        }

        try
        {
            if (await jobs.FindJobsAsync(states, type, error, cursor, limit, DurableSearchScanLimit, wait: false, http.RequestAborted).ConfigureAwait(false) is not { } page)
            {
                http.Response.Headers.RetryAfter = "1";
                return TypedResults.Problem(
                    statusCode: StatusCodes.Status503ServiceUnavailable,
                    title: "Search busy",
                    detail: $"Durable queue '{queue}' runs {RedisJobBrowser.MaxConcurrentSearches} job searches already in this process; try again in a second.");
            }

            return TypedResults.Ok(new DurableJobPageState(page.Jobs.Select(static j => AdminResponses.FromJob(j, j.Name)).ToArray(), page.Next, page.Scanned, false));
        }
        catch (Exception ex) when (ex is StackExchange.Redis.RedisException or TimeoutException)
        {
            // Never Redis's own text: the cursor is checked before Redis sees it; the failure is logged and classified.
            return AdminRedisFailures.Problem(http, queue, ex);
        }
    }

    /// <summary>How many entries a durable search examines at most per page, as an in-memory one (JobQuery's default); read in script calls of a few ms (see RedisJobBrowser.SearchCallEntries).</summary>
    private const int DurableSearchScanLimit = 100_000;

    private static AdminEndpointMetadata? Settings(HttpContext http) =>
        http.GetEndpoint()?.Metadata.GetMetadata<AdminEndpointMetadata>();

    private static ValidationProblem InvalidDurableJobId(string id) =>
        Invalid("id", $"\"id\" must be a durable job id (such as 1732500000000-0, or s1732500000000-1 for a scheduled job, as EnqueueAsync and ScheduleAsync return it: two whole numbers from 0 to 18446744073709551615 without leading zeros); it was '{id}'.");

    private static ValidationProblem InvalidJobId(string id) =>
        Invalid("id", $"\"id\" must be a job id (a whole number from 0, as EnqueueResult.JobId and Schedule return it); it was '{id}'.");

    private static ProblemHttpResult UnknownJob(string queue, string id) =>
        TypedResults.Problem(
            statusCode: StatusCodes.Status404NotFound,
            title: "Unknown job",
            detail: $"Queue '{queue}' knows no job '{id}': the id is unknown, its job was enqueued without JobOptions (such jobs are not tracked), or it ended longer ago than the queue's FinishedJobRetention.");

    private static ProblemHttpResult UnknownDurableJob(string queue, string id) =>
        TypedResults.Problem(
            statusCode: StatusCodes.Status404NotFound,
            title: "Unknown job",
            detail: $"Durable queue '{queue}' has no job '{id}' in Redis: the id is unknown, or its job ended longer ago than the queue's FinishedJobRetention (or beyond its MaxFinishedJobs).");

    private static DurableQueue? FindDurable(HttpContext http, string queue) =>
        http.RequestServices.GetService<DurableQueueRegistry>() is { } registry && registry.TryGet(queue, out var durable) ? durable : null;

    private static ProblemHttpResult NotDurable(string queue) =>
        TypedResults.Problem(
            statusCode: StatusCodes.Status400BadRequest,
            title: "Invalid 'queue'.",
            detail: $"Queue '{queue}' keeps its jobs in memory: its dead letters are a record of what failed and hold no runnable job. Only a durable queue's dead letters can be requeued or deleted.",
            extensions: new Dictionary<string, object?> { ["errors"] = new Dictionary<string, string[]> { ["queue"] = [$"'{queue}' is not a durable queue."] } });

    /// <summary>A bulk requeue's outcome for a dead letter the queue had no room for (it stays a dead letter).</summary>
    private const string QueueFullOutcome = "queue-full";

    /// <summary>The Retry-After (seconds) of a requeue refused for lack of room: long enough for some jobs to finish.</summary>
    private const string RequeueRetryAfterSeconds = "5";

    /// <summary>A requeue refused for lack of room, as an enqueue is refused: 503 with Retry-After, the dead letter kept.</summary>
    private static ProblemHttpResult QueueFull(string queue, string id, RedisJobBrowser jobs, HttpContext http)
    {
        http.Response.Headers.RetryAfter = RequeueRetryAfterSeconds;
        return TypedResults.Problem(
            statusCode: StatusCodes.Status503ServiceUnavailable,
            title: "Queue full",
            detail: $"Durable queue '{queue}' is full ({jobs.Capacity} unfinished jobs in Redis, its Capacity): dead letter '{id}' was not requeued and stays a dead letter; retry once jobs have finished.");
    }

    private static ProblemHttpResult UnknownDeadLetter(string queue, string id) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown dead letter", detail: $"Durable queue '{queue}' has no dead letter '{id}'.");

    private static ProblemHttpResult UnknownQueue(string queue) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown queue", detail: $"No WorkQueue queue is named '{queue}'.");
}
