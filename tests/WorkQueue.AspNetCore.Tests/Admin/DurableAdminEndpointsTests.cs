using System.Net;
using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>
/// The admin endpoints over a durable queue, on real Kestrel and a real redis-server: the <c>durable</c> section, the
/// dead-letter stream listed, requeued and deleted, and the errors those calls answer.
/// </summary>
public sealed class DurableAdminEndpointsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Prefix = "/admin/workqueue";
    private const string Durable = DurableTestHost.Queue;

    [Fact]
    public async Task GetOne_DurableQueue_HasADurableSectionWhoseFiguresFollowTheJobs()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = async (_, _, _) => await release.Task };
        await using var app = await StartAsync(log);
        var producer = Producer(app);

        for (int n = 0; n < 3; n++)
        {
            await producer.EnqueueAsync(new TestJob(n));
        }

        await log.WaitUntilAsync(() => log.Runs.Count == 3, "the three jobs to start");

        // Three jobs running here: unfinished in the stream and pending on this process's consumer.
        var running = await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "streamLength") == 3 && Long(d, "pending") == 3, "3 unfinished, 3 pending");
        var durable = running.GetProperty("durable");
        string consumer = durable.GetProperty("consumer").GetString()!;
        Assert.False(string.IsNullOrEmpty(consumer));
        Assert.Equal(DurableTestHost.StreamKey(app.Prefix), durable.GetProperty("stream").GetString());
        Assert.True(durable.GetProperty("connected").GetBoolean());
        Assert.Equal(JsonValueKind.Null, durable.GetProperty("lastError").ValueKind);
        Assert.Equal(3, durable.GetProperty("heldHere").GetInt32());
        Assert.Equal(0, Long(running, "lag"));
        Assert.Equal(0, Long(running, "delayedRetries"));
        Assert.Equal(0, Long(running, "deadLetters"));
        Assert.True(durable.GetProperty("readAt").GetDateTimeOffset() > DateTimeOffset.UtcNow.AddMinutes(-1));
        var mine = Assert.Single(durable.GetProperty("consumers").EnumerateArray());
        Assert.Equal(consumer, mine.GetProperty("name").GetString());
        Assert.Equal(3, mine.GetProperty("pending").GetInt64());
        Assert.True(mine.GetProperty("idleMs").GetDouble() >= 0);
        Assert.True(mine.GetProperty("thisProcess").GetBoolean());

        // Once they finish, the figures read from Redis go back to zero.
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 3, "the three jobs to complete");
        var done = await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "streamLength") == 0 && Long(d, "pending") == 0, "an empty stream");
        Assert.Equal(0, done.GetProperty("durable").GetProperty("heldHere").GetInt32());
        Assert.Equal(3, done.GetProperty("totals").GetProperty("succeeded").GetInt64());
    }

    [Fact]
    public async Task GetAll_MixedQueues_DurableSectionOnlyOnTheDurableQueue()
    {
        await using var app = await StartAsync(new JobLog());

        using var json = await GetJsonAsync(app, Prefix);

        var byName = json.RootElement.EnumerateArray().ToDictionary(q => q.GetProperty("name").GetString()!);
        Assert.Equal(JsonValueKind.Object, byName[Durable].GetProperty("durable").ValueKind);
        Assert.Equal(JsonValueKind.Null, byName["default"].GetProperty("durable").ValueKind);
    }

    [Fact]
    public async Task GetDeadLetters_DurableQueue_ListsNewestFirstWithErrorAndReasonWithoutPayload()
    {
        var log = new JobLog { Behavior = static (job, _, _) => throw new InvalidOperationException($"job {job.N} said <no> & stopped") };
        await using var app = await StartAsync(log);
        var producer = Producer(app);
        string first = await producer.EnqueueAsync(new TestJob(1, "card-4111"));
        await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "deadLetters") == 1, "the first dead letter");
        string second = await producer.EnqueueAsync(new TestJob(2, "card-4111"));
        await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "deadLetters") == 2, "the second dead letter");

        using var response = await app.Client.GetAsync($"{Prefix}/{Durable}/dead-letters");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        string body = await response.Content.ReadAsStringAsync();
        Assert.DoesNotContain("card-4111", body);
        using var json = JsonDocument.Parse(body);
        var letters = json.RootElement.EnumerateArray().ToArray();
        Assert.Equal([second, first], letters.Select(l => l.GetProperty("jobId").GetString()));
        var newest = letters[0];
        Assert.Matches(@"^\d+-\d+$", newest.GetProperty("id").GetString());
        Assert.Contains(nameof(TestJobHandler), newest.GetProperty("name").GetString());
        Assert.Equal(1, newest.GetProperty("attempt").GetInt32());
        Assert.Equal(typeof(InvalidOperationException).FullName, newest.GetProperty("error").GetProperty("type").GetString());
        Assert.Equal("job 2 said <no> & stopped", newest.GetProperty("error").GetProperty("message").GetString());
        Assert.Equal("failed", newest.GetProperty("reason").GetString());
        var deadLetteredAt = newest.GetProperty("deadLetteredAt").GetDateTimeOffset();
        var enqueuedAt = newest.GetProperty("enqueuedAt").GetDateTimeOffset();
        Assert.True(enqueuedAt > DateTimeOffset.UtcNow.AddMinutes(-5), $"enqueuedAt {enqueuedAt:O}");
        Assert.True(deadLetteredAt >= enqueuedAt, $"deadLetteredAt {deadLetteredAt:O} before enqueuedAt {enqueuedAt:O}");
    }

    [Fact]
    public async Task Requeue_DeadLetter_RunsTheJobAgainAndRemovesTheDeadLetter()
    {
        bool failing = true;
        var log = new JobLog { Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException("provider down") : ValueTask.CompletedTask };
        await using var app = await StartAsync(log);
        string jobId = await Producer(app).EnqueueAsync(new TestJob(5));
        string id = await SingleDeadLetterIdAsync(app);

        // The cause is fixed, then the operator puts the job back.
        Volatile.Write(ref failing, false);
        using var response = await SendAsync(app, HttpMethod.Post, $"{Prefix}/{Durable}/dead-letters/{id}/requeue");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(Durable, json.RootElement.GetProperty("queue").GetString());
        Assert.Equal(id, json.RootElement.GetProperty("deadLetterId").GetString());
        string newId = json.RootElement.GetProperty("newId").GetString()!;
        Assert.Matches(@"^\d+-\d+$", newId);
        Assert.NotEqual(jobId, newId);
        await log.WaitUntilAsync(() => log.Completed == 1, "the requeued job to run and succeed");
        Assert.Equal(2, log.CallsOf(5));
        Assert.Empty(await DeadLettersAsync(app));
        await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "deadLetters") == 0 && Long(d, "streamLength") == 0, "no dead letter and an empty stream");

        // The same dead letter cannot be requeued twice.
        using var again = await SendAsync(app, HttpMethod.Post, $"{Prefix}/{Durable}/dead-letters/{id}/requeue");
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
        Assert.Equal(2, log.CallsOf(5));
    }

    [Fact]
    public async Task Delete_DeadLetter_RemovesItWithoutRunningIt()
    {
        var log = new JobLog { Behavior = static (_, _, _) => throw new InvalidOperationException("always") };
        await using var app = await StartAsync(log);
        await Producer(app).EnqueueAsync(new TestJob(9));
        string id = await SingleDeadLetterIdAsync(app);

        using var response = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/dead-letters/{id}");

        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        Assert.Empty(await DeadLettersAsync(app));
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.Equal(0, await redisClient.GetDatabase().StreamLengthAsync(DurableTestHost.DeadKey(app.Prefix)));
        Assert.Equal(0, await redisClient.GetDatabase().StreamLengthAsync(DurableTestHost.StreamKey(app.Prefix)));
        Assert.Equal(1, log.CallsOf(9));

        using var again = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/dead-letters/{id}");
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
    }

    [Fact]
    public async Task BulkRequeue_DeadLetters_RequeuesThemAndSaysWhichWereUnknown()
    {
        bool failing = true;
        var log = new JobLog { Behavior = (_, _, _) => Volatile.Read(ref failing) ? throw new InvalidOperationException("provider down") : ValueTask.CompletedTask };
        await using var app = await StartAsync(log);
        for (int n = 1; n <= 3; n++)
        {
            await Producer(app).EnqueueAsync(new TestJob(n));
        }

        JsonElement[] letters = [];
        await Eventually.HoldsAsync(async () => (letters = await DeadLettersAsync(app)).Length == 3, "three dead letters listed");
        string[] ids = [.. letters.Select(l => l.GetProperty("id").GetString()!)];
        Volatile.Write(ref failing, false);

        using var response = await PostJsonAsync(app, $"{Prefix}/{Durable}/dead-letters/requeue", $$"""{"ids":["{{ids[0]}}","{{ids[1]}}","1-0","{{ids[0]}}"]}""");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("requeue", json.RootElement.GetProperty("action").GetString());
        Assert.Equal(2, json.RootElement.GetProperty("done").GetInt32());
        Assert.Equal(1, json.RootElement.GetProperty("notFound").GetInt32());
        var results = json.RootElement.GetProperty("results").EnumerateArray().ToArray();
        Assert.Equal([ids[0], ids[1], "1-0"], results.Select(r => r.GetProperty("deadLetterId").GetString()));
        Assert.Equal(["requeued", "requeued", "not-found"], results.Select(r => r.GetProperty("outcome").GetString()));
        Assert.All(results.Take(2), r => Assert.Matches(@"^\d+-\d+$", r.GetProperty("newId").GetString()!));
        await log.WaitUntilAsync(() => log.Completed == 2, "the two requeued jobs to run and succeed");
        Assert.Equal([ids[2]], (await DeadLettersAsync(app)).Select(l => l.GetProperty("id").GetString()));
    }

    [Fact]
    public async Task Requeue_QueueAtCapacity_503WithRetryAfterAndBulkSaysQueueFull_DeadLettersKept()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (_, _, _) => new ValueTask(release.Task) };
        await using var app = await StartAsync(log, capacity: 2);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var ids = new List<string>();
        for (int n = 0; n < 3; n++)
        {
            ids.Add((string)(await db.StreamAddAsync(DurableTestHost.DeadKey(app.Prefix), [new("j", $"1-{n}"), new("p", $"{{\"n\":{10 + n}}}"), new("a", "1"), new("t", "1000"), new("e", "boom"), new("r", "failed"), new("f", "1002")]))!);
        }

        // Two jobs running: the queue's two places are taken.
        await Producer(app).EnqueueAsync(new TestJob(1));
        await Producer(app).EnqueueAsync(new TestJob(2));
        await log.WaitUntilAsync(() => log.Runs.Count == 2, "both jobs running");

        using (var single = await SendAsync(app, HttpMethod.Post, $"{Prefix}/{Durable}/dead-letters/{ids[0]}/requeue"))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, single.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(5), single.Headers.RetryAfter?.Delta);
            using var problem = JsonDocument.Parse(await single.Content.ReadAsStringAsync());
            Assert.Equal("Queue full", problem.RootElement.GetProperty("title").GetString());
            Assert.Contains("(2 unfinished jobs in Redis, its Capacity)", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        }

        using (var bulk = await PostJsonAsync(app, $"{Prefix}/{Durable}/dead-letters/requeue", JsonSerializer.Serialize(new { ids = ids.Append("1-0") })))
        {
            Assert.Equal(HttpStatusCode.OK, bulk.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(5), bulk.Headers.RetryAfter?.Delta);
            using var json = JsonDocument.Parse(await bulk.Content.ReadAsStringAsync());
            Assert.Equal((0, 1, 3), (json.RootElement.GetProperty("done").GetInt32(), json.RootElement.GetProperty("notFound").GetInt32(), json.RootElement.GetProperty("queueFull").GetInt32()));
            Assert.Equal(["queue-full", "queue-full", "queue-full", "not-found"], json.RootElement.GetProperty("results").EnumerateArray().Select(r => r.GetProperty("outcome").GetString()));
        }

        Assert.Equal(3, (await DeadLettersAsync(app)).Length);
        Assert.Equal(2, await db.StreamLengthAsync(DurableTestHost.StreamKey(app.Prefix)));

        // Once the jobs finished there is room again.
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 2, "the two jobs");
        await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "pending") == 0 && Long(d, "lag") == 0, "the two jobs acknowledged");
        using var requeued = await SendAsync(app, HttpMethod.Post, $"{Prefix}/{Durable}/dead-letters/{ids[0]}/requeue");
        Assert.Equal(HttpStatusCode.OK, requeued.StatusCode);
        await log.WaitUntilAsync(() => log.Completed == 3, "the requeued job");
    }

    [Fact]
    public async Task BulkDelete_DeadLetters_RemovesThemWithoutRunningThem()
    {
        var log = new JobLog { Behavior = static (_, _, _) => throw new InvalidOperationException("always") };
        await using var app = await StartAsync(log);
        await Producer(app).EnqueueAsync(new TestJob(1));
        await Producer(app).EnqueueAsync(new TestJob(2));
        JsonElement[] letters = [];
        await Eventually.HoldsAsync(async () => (letters = await DeadLettersAsync(app)).Length == 2, "two dead letters listed");

        using var response = await PostJsonAsync(app, $"{Prefix}/{Durable}/dead-letters/delete", JsonSerializer.Serialize(new { ids = letters.Select(l => l.GetProperty("id").GetString()) }));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(2, json.RootElement.GetProperty("done").GetInt32());
        Assert.All(json.RootElement.GetProperty("results").EnumerateArray(), r => Assert.Equal("deleted", r.GetProperty("outcome").GetString()));
        Assert.Empty(await DeadLettersAsync(app));
        Assert.Equal(1, log.CallsOf(1));
        Assert.Equal(1, log.CallsOf(2));
    }

    [Theory]
    [InlineData("""{"ids":[]}""", "ids")]
    [InlineData("""{}""", "ids")]
    [InlineData("""{"ids":["not-an-id"]}""", "ids")]
    [InlineData("""{"ids":["1-0",null]}""", "ids")]
    [InlineData("TOO_MANY", "ids")]
    [InlineData("""{"ids":[5]}""", "ids")]
    [InlineData("{not json", "body")]
    [InlineData("""["1-0"]""", "body")]
    public async Task BulkDeadLetters_BadBody_400NamingTheField(string body, string field)
    {
        await using var app = await StartAsync(new JobLog());
        if (body == "TOO_MANY")
        {
            body = JsonSerializer.Serialize(new { ids = Enumerable.Range(0, 1_001).Select(i => $"{i + 1}-0") });
        }

        foreach (string action in new[] { "requeue", "delete" })
        {
            using var response = await PostJsonAsync(app, $"{Prefix}/{Durable}/dead-letters/{action}", body);

            Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
            using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
            Assert.True(json.RootElement.GetProperty("errors").TryGetProperty(field, out _), $"{action} {body}: {json.RootElement}");
        }
    }

    [Fact]
    public async Task BulkDeadLetters_InMemoryQueue_400NamingQueue_UnknownQueue404()
    {
        await using var app = await StartAsync(new JobLog());

        using var memory = await PostJsonAsync(app, $"{Prefix}/default/dead-letters/requeue", """{"ids":["1-0"]}""");
        using var unknown = await PostJsonAsync(app, $"{Prefix}/nope/dead-letters/delete", """{"ids":["1-0"]}""");

        Assert.Equal(HttpStatusCode.BadRequest, memory.StatusCode);
        Assert.Contains("\"queue\"", await memory.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
    }

    [Theory]
    [InlineData("POST", "/requeue", "1-0")]
    [InlineData("DELETE", "", "1-0")]
    [InlineData("POST", "/requeue", "nope")]
    [InlineData("DELETE", "", "nope")]
    [InlineData("POST", "/requeue", "1")]
    [InlineData("DELETE", "", "1")]
    [InlineData("POST", "/requeue", "99999999999999999999-0")]
    [InlineData("DELETE", "", "-")]
    public async Task RequeueOrDelete_UnknownDeadLetter_Returns404ProblemNamingIt(string method, string suffix, string id)
    {
        await using var app = await StartAsync(new JobLog());

        // A dead-letter stream that exists (Redis answers XDEL on a missing key with 0 before it reads the id).
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var deadKey = DurableTestHost.DeadKey(app.Prefix);
        string other = (await redisClient.GetDatabase().StreamAddAsync(deadKey, [new("p", "{}"), new("a", "1"), new("e", "E: x"), new("r", "failed"), new("f", "0"), new("t", "0")]))!;

        using var response = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/dead-letters/{Uri.EscapeDataString(id)}{suffix}");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains($"'{id}'", await response.Content.ReadAsStringAsync());
        Assert.Equal([other], (await redisClient.GetDatabase().StreamRangeAsync(deadKey)).Select(e => (string?)e.Id));
    }

    [Fact]
    public async Task RequeueOrDelete_IncompleteIdOfARealDeadLetter_Returns404AndLeavesIt()
    {
        // Redis reads "1712345678901" as a range of ids in XRANGE and as "1712345678901-0" in XDEL: only the exact id
        // the list gave may name a dead letter.
        var log = new JobLog { Behavior = static (_, _, _) => throw new InvalidOperationException("always") };
        await using var app = await StartAsync(log);
        await Producer(app).EnqueueAsync(new TestJob(3));
        string id = await SingleDeadLetterIdAsync(app);
        string millisecondsOnly = id[..id.IndexOf('-', StringComparison.Ordinal)];

        using var requeue = await SendAsync(app, HttpMethod.Post, $"{Prefix}/{Durable}/dead-letters/{millisecondsOnly}/requeue");
        using var delete = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/dead-letters/{millisecondsOnly}");

        Assert.Equal(HttpStatusCode.NotFound, requeue.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, delete.StatusCode);
        Assert.Equal([id], (await DeadLettersAsync(app)).Select(l => l.GetProperty("id").GetString()));
        Assert.Equal(1, log.CallsOf(3));
    }

    [Theory]
    [InlineData("GET", "/nope/dead-letters")]
    [InlineData("POST", "/nope/dead-letters/1-0/requeue")]
    [InlineData("DELETE", "/nope/dead-letters/1-0")]
    public async Task DeadLetterRoutes_UnknownQueue_Return404ProblemNamingIt(string method, string path)
    {
        await using var app = await StartAsync(new JobLog());

        using var response = await SendAsync(app, new HttpMethod(method), Prefix + path);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("'nope'", await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("POST", "/requeue")]
    [InlineData("DELETE", "")]
    public async Task RequeueOrDelete_InMemoryQueue_Returns400ProblemNamingQueue(string method, string suffix)
    {
        await using var app = await StartAsync(new JobLog());
        var control = app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == "default");
        Assert.True(app.Services.GetRequiredService<IInMemoryWorkQueue>().TryEnqueue(_ => throw new InvalidOperationException("in memory")));
        await Wait.UntilAsync(() => control.GetSnapshot().Totals.DeadLettered == 1, "the in-memory job to be dead-lettered");
        string id = control.GetDeadLetters()[0].Job.Id;

        using var response = await SendAsync(app, new HttpMethod(method), $"{Prefix}/default/dead-letters/{id}{suffix}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(400, json.RootElement.GetProperty("status").GetInt32());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty("queue", out var messages), json.RootElement.ToString());
        Assert.Contains("'default'", messages[0].GetString());
        Assert.Single(control.GetDeadLetters());
    }

    [Theory]
    [InlineData("POST", "/requeue", null)]
    [InlineData("DELETE", "", null)]
    [InlineData("POST", "/requeue", "text/plain")]
    [InlineData("DELETE", "", "application/x-www-form-urlencoded")]
    public async Task RequeueOrDelete_WithoutJsonContentType_Returns415AndChangesNothing(string method, string suffix, string? contentType)
    {
        var log = new JobLog { Behavior = static (_, _, _) => throw new InvalidOperationException("always") };
        await using var app = await StartAsync(log);
        await Producer(app).EnqueueAsync(new TestJob(4));
        string id = await SingleDeadLetterIdAsync(app);

        using var response = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/dead-letters/{id}{suffix}", contentType);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal([id], (await DeadLettersAsync(app)).Select(l => l.GetProperty("id").GetString()));
        Assert.Equal(1, log.CallsOf(4));
    }

    private async Task<DurableApp> StartAsync(JobLog log, RedisServer? server = null, int capacity = 10_000, LogCapture? logs = null)
    {
        string prefix = DurableTestHost.NewPrefix();
        var app = await TestApp.StartAsync(
            b =>
            {
                if (logs is not null)
                {
                    b.Logging.AddProvider(logs);
                }

                b.Services.AddSingleton(log);
                b.Services.AddSingleton(new InstanceName("a"));
                b.Services.AddRedisWarmup(o => o.Configuration = (server ?? redis.Server).Configuration + (server is null ? string.Empty : ",syncTimeout=1000,asyncTimeout=1000,connectTimeout=1000"));
                b.Services.AddWorkQueue(o => o.Retry.MaxAttempts = 1).AddDurableQueue<TestJobHandler, TestJob>(
                    Durable,
                    o =>
                    {
                        o.MinWorkers = 4;
                        o.MaxWorkers = 4;
                        o.Retry.MaxAttempts = 1;
                        o.Capacity = capacity;
                    },
                    d =>
                    {
                        d.KeyPrefix = prefix;
                        d.PollInterval = TimeSpan.FromMilliseconds(200);
                    });
            },
            web => web.MapWorkQueueAdmin(Prefix));
        return new DurableApp(app, prefix);
    }

    [Fact]
    public async Task Scheduled_DurableQueue_ListedFromRedisAndCancelledThere()
    {
        var log = new JobLog();
        await using var app = await StartAsync(log);
        var producer = Producer(app);
        string later = await producer.ScheduleAsync(new TestJob(2), TimeSpan.FromHours(2));
        string sooner = await producer.ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));

        using (var list = await GetJsonAsync(app, $"{Prefix}/{Durable}/scheduled"))
        {
            Assert.Equal([sooner, later], list.RootElement.EnumerateArray().Select(j => j.GetProperty("id").GetString()));
            Assert.Equal(nameof(TestJobHandler), list.RootElement[0].GetProperty("job").GetString());
        }

        await UntilAsync(app, $"{Prefix}/{Durable}", d => Long(d, "scheduled") == 2, "two scheduled jobs in the durable figures");
        using var cancelled = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/scheduled/{sooner}");
        Assert.Equal(HttpStatusCode.NoContent, cancelled.StatusCode);
        using var again = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/scheduled/{sooner}");
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
        using var after = await GetJsonAsync(app, $"{Prefix}/{Durable}/scheduled");
        Assert.Equal([later], after.RootElement.EnumerateArray().Select(j => j.GetProperty("id").GetString()));
    }

    [Fact]
    public async Task JobSearch_DurableQueue_ListsEachStateFromRedisWithStringIdsAndAttempts()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog
        {
            Behavior = async (job, _, _) =>
            {
                if (job.N == 1)
                {
                    await release.Task;
                }
                else if (job.N == 2)
                {
                    throw new InvalidOperationException("disk full on <volume 2>");
                }
            },
        };
        await using var app = await StartAsync(log);
        var producer = Producer(app);
        string running = await producer.EnqueueAsync(new TestJob(1));
        string dead = await producer.EnqueueAsync(new TestJob(2));
        string succeeded = await producer.EnqueueAsync(new TestJob(3));
        string scheduled = await producer.ScheduleAsync(new TestJob(4), TimeSpan.FromHours(1));
        string canceled = await producer.ScheduleAsync(new TestJob(5), TimeSpan.FromHours(2));
        Assert.Equal(JobCancelOutcome.Canceled, (await producer.CancelAsync(canceled)).Outcome);
        await log.WaitUntilAsync(() => log.Runs.Count >= 3 && log.Completed >= 1, "the three jobs to run");
        await UntilAsync(app, $"{Prefix}/{Durable}/jobs/{dead}", j => j.GetProperty("state").GetString() == "deadLettered", "the dead letter");
        await UntilAsync(app, $"{Prefix}/{Durable}/jobs/{succeeded}", j => j.GetProperty("state").GetString() == "succeeded", "the success");

        foreach (var (state, id) in new[] { ("running", running), ("deadLettered", dead), ("succeeded", succeeded), ("scheduled", scheduled), ("canceled", canceled) })
        {
            using var page = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?state={state}");
            var job = Assert.Single(page.RootElement.GetProperty("jobs").EnumerateArray());
            Assert.Equal((id, state), (job.GetProperty("id").GetString(), job.GetProperty("state").GetString()));
            Assert.Equal(nameof(TestJobHandler), job.GetProperty("job").GetString());
            Assert.Equal(JsonValueKind.Array, job.GetProperty("attempts").ValueKind);
            Assert.Equal(JsonValueKind.Null, page.RootElement.GetProperty("next").ValueKind);
            Assert.False(page.RootElement.GetProperty("payloadsShown").GetBoolean());
        }

        using (var deadPage = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?state=deadLettered"))
        {
            var attempt = Assert.Single(deadPage.RootElement.GetProperty("jobs")[0].GetProperty("attempts").EnumerateArray());
            Assert.Contains("disk full on <volume 2>", attempt.GetProperty("error").GetString());
        }

        // All states, and a type: a durable queue has one job type, which a type text matches (all) or not (none).
        using (var all = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?type={nameof(TestJobHandler).ToLowerInvariant()}"))
        {
            Assert.Equal(
                new[] { running, dead, succeeded, scheduled, canceled }.Order(),
                all.RootElement.GetProperty("jobs").EnumerateArray().Select(j => j.GetProperty("id").GetString()!).Order());
        }

        using (var none = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?type=SomeOtherHandler"))
        {
            Assert.Empty(none.RootElement.GetProperty("jobs").EnumerateArray());
            Assert.Equal(JsonValueKind.Null, none.RootElement.GetProperty("next").ValueKind);
        }

        release.SetResult();
    }

    [Fact]
    public async Task JobSearch_DurableQueuePaused_ListsQueuedJobsFromTheStreamNewestFirstAcrossPages()
    {
        await using var app = await StartAsync(new JobLog());
        Assert.True(app.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(Durable, out var control));
        control.Pause();
        var producer = Producer(app);
        var ids = new List<string>();
        for (int n = 0; n < 5; n++)
        {
            ids.Add(await producer.EnqueueAsync(new TestJob(n)));
        }

        var seen = new List<string>();
        string? cursor = null;
        do
        {
            using var page = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?state=queued&limit=2" + (cursor is null ? string.Empty : $"&cursor={Uri.EscapeDataString(cursor)}"));
            foreach (var job in page.RootElement.GetProperty("jobs").EnumerateArray())
            {
                Assert.Equal("queued", job.GetProperty("state").GetString());
                Assert.Empty(job.GetProperty("attempts").EnumerateArray());
                seen.Add(job.GetProperty("id").GetString()!);
            }

            cursor = page.RootElement.GetProperty("next").GetString();
        }
        while (cursor is not null);

        ids.Reverse();
        Assert.Equal(ids, seen);
        using var none = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?state=running");
        Assert.Empty(none.RootElement.GetProperty("jobs").EnumerateArray());
    }

    [Fact]
    public async Task JobSearch_DurableQueue_PagesEndedJobsNewestFirstWhileJobsKeepFinishing()
    {
        var log = new JobLog();
        await using var app = await StartAsync(log);
        var producer = Producer(app);
        var first = new List<string>();
        for (int n = 0; n < 25; n++)
        {
            first.Add(await producer.EnqueueAsync(new TestJob(n)));
        }

        await log.WaitUntilAsync(() => log.Completed == 25, "the 25 jobs to succeed");
        await UntilAsync(app, $"{Prefix}/{Durable}/jobs?state=succeeded&limit=500", p => p.GetProperty("jobs").GetArrayLength() == 25, "25 succeeded jobs listed");

        var seen = new List<string>();
        var endedAt = new List<DateTimeOffset>();
        string? cursor = null;
        int pages = 0;
        do
        {
            using var page = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?state=succeeded&limit=7" + (cursor is null ? string.Empty : $"&cursor={Uri.EscapeDataString(cursor)}"));
            foreach (var job in page.RootElement.GetProperty("jobs").EnumerateArray())
            {
                seen.Add(job.GetProperty("id").GetString()!);
                endedAt.Add(job.GetProperty("stateSince").GetDateTimeOffset());
            }

            cursor = page.RootElement.GetProperty("next").GetString();
            pages++;

            // More jobs end between pages: they are newer than the cursor, so the pages go on where they were.
            int before = log.Completed;
            await producer.EnqueueAsync(new TestJob(100 + pages));
            await producer.EnqueueAsync(new TestJob(200 + pages));
            await log.WaitUntilAsync(() => log.Completed == before + 2, "two more jobs to succeed");
        }
        while (cursor is not null && pages < 20);

        Assert.Equal(first.Order(), seen.Order());
        Assert.Equal(endedAt.OrderDescending(), endedAt);
        Assert.InRange(pages, 4, 5);
    }

    [Fact]
    public async Task JobSearch_DurableQueueErrorText_FindsTheMatchesAndABoundedScanResumesWhereItStopped()
    {
        var log = new JobLog { Behavior = static (job, _, _) => throw new InvalidOperationException(job.N % 3 == 0 ? $"Disk FULL {job.N}" : $"timeout {job.N}") };
        await using var app = await StartAsync(log);
        var producer = Producer(app);
        var disk = new List<string>();
        for (int n = 1; n <= 9; n++)
        {
            string id = await producer.EnqueueAsync(new TestJob(n));
            if (n % 3 == 0)
            {
                disk.Add(id);
            }
        }

        await UntilAsync(app, $"{Prefix}/{Durable}/jobs?state=deadLettered", p => p.GetProperty("jobs").GetArrayLength() == 9, "nine dead-lettered jobs");

        using (var page = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs?error=disk%20full"))
        {
            Assert.Equal(disk.Order(), page.RootElement.GetProperty("jobs").EnumerateArray().Select(j => j.GetProperty("id").GetString()!).Order());
            Assert.Equal(9, page.RootElement.GetProperty("scanned").GetInt32());
        }

        // A scan of at most 2 entries per page: pages with 0 or 1 match, each resuming after the last entry it read.
        var found = new List<string>();
        string? cursor = null;
        int scanned = 0;
        do
        {
            var page = await producer.FindJobsAsync(new JobQuery { States = [JobState.DeadLettered], ErrorContains = "DISK", Cursor = cursor, ScanLimit = 2 });
            Assert.InRange(page.Scanned, 1, 2);
            scanned += page.Scanned;
            found.AddRange(page.Jobs.Select(j => j.Id));
            cursor = page.Next;
        }
        while (cursor is not null);

        Assert.Equal(disk.Order(), found.Order());
        Assert.Equal(9, scanned);

        // The public search checks its query as the admin route does, and a durable queue has one job type.
        await Assert.ThrowsAsync<ArgumentException>(async () => await producer.FindJobsAsync(new JobQuery { Cursor = "0" }));
        Assert.Empty((await producer.FindJobsAsync(new JobQuery { NameContains = "OtherHandler" })).Jobs);
        Assert.Equal(9, (await producer.FindJobsAsync(new JobQuery { NameContains = "testjobhandler", States = [JobState.DeadLettered] })).Jobs.Count);
    }

    [Theory]
    [InlineData("cursor=S:1:x", "cursor")]
    [InlineData("cursor=Q:1:0", "cursor")]
    [InlineData("state=finished", "state")]
    [InlineData("limit=0", "limit")]
    public async Task JobSearch_DurableQueueBadField_Answers400NamingIt(string query, string field)
    {
        await using var app = await StartAsync(new JobLog());

        using var response = await app.Client.GetAsync($"{Prefix}/{Durable}/jobs?{query}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty(field, out _), field);
    }

    [Fact]
    public async Task JobSearch_DurableQueueRedisUnreachable_Answers503()
    {
        var server = await RedisServer.StartAsync();
        await using var app = await StartAsync(new JobLog(), server);
        await server.DisposeAsync();

        using var response = await app.Client.GetAsync($"{Prefix}/{Durable}/jobs?state=succeeded");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task GetJob_DurableQueue_AnswersTheJobFromRedisWithItsAttempts()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = async (_, _, _) => await release.Task };
        await using var app = await StartAsync(log);
        string id = await Producer(app).EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the job to start");

        using var running = await GetJsonAsync(app, $"{Prefix}/{Durable}/jobs/{id}");
        var job = running.RootElement;
        Assert.Equal(id, job.GetProperty("id").GetString());
        Assert.Equal((Durable, "running"), (job.GetProperty("queue").GetString(), job.GetProperty("state").GetString()));
        Assert.Equal(nameof(TestJobHandler), job.GetProperty("job").GetString());
        Assert.False(string.IsNullOrEmpty(job.GetProperty("worker").GetString()));
        foreach (string field in new[] { "attempt", "enqueuedAt", "stateSince", "runAt", "startedAt", "lastError", "cancelRequested", "cancelIgnored" })
        {
            Assert.True(job.TryGetProperty(field, out _), field);
        }

        var attempt = Assert.Single(job.GetProperty("attempts").EnumerateArray());
        Assert.Equal((1, "running"), (attempt.GetProperty("number").GetInt32(), attempt.GetProperty("outcome").GetString()));

        release.SetResult();
        await UntilAsync(app, $"{Prefix}/{Durable}/jobs/{id}", j => j.GetProperty("state").GetString() == "succeeded", "the success");
    }

    [Fact]
    public async Task CancelJob_DurableQueue_CancelsThenAnswers409WithTheEndedJob()
    {
        await using var app = await StartAsync(new JobLog());
        string id = await Producer(app).ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));

        using var cancel = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/jobs/{id}");
        using var again = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/jobs/{id}");

        Assert.Equal(HttpStatusCode.OK, cancel.StatusCode);
        using var body = JsonDocument.Parse(await cancel.Content.ReadAsStringAsync());
        Assert.Equal("canceled", body.RootElement.GetProperty("outcome").GetString());
        Assert.Equal(("canceled", id), (body.RootElement.GetProperty("job").GetProperty("state").GetString(), body.RootElement.GetProperty("job").GetProperty("id").GetString()));
        Assert.Equal(HttpStatusCode.Conflict, again.StatusCode);
        using var conflict = JsonDocument.Parse(await again.Content.ReadAsStringAsync());
        Assert.Equal("canceled", conflict.RootElement.GetProperty("job").GetProperty("state").GetString());
        Assert.Empty((await Producer(app).GetJobAsync(id))!.Attempts);
    }

    [Theory]
    [InlineData("GET")]
    [InlineData("DELETE")]
    public async Task Jobs_DurableQueue_UnknownIs404AndMalformedIs400NamingId(string method)
    {
        await using var app = await StartAsync(new JobLog());

        using var unknown = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/jobs/1-0");
        using var malformed = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/jobs/12abc");

        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal(HttpStatusCode.BadRequest, malformed.StatusCode);
        using var problem = JsonDocument.Parse(await malformed.Content.ReadAsStringAsync());
        Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty("id", out _));
    }

    [Theory]
    [InlineData("GET")]
    [InlineData("DELETE")]
    public async Task Jobs_DurableQueueRedisUnreachable_Answers503(string method)
    {
        var server = await RedisServer.StartAsync();
        await using var app = await StartAsync(new JobLog(), server);
        string id = await Producer(app).ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));
        await server.DisposeAsync();

        using var response = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/jobs/{id}");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.NotNull(response.Headers.RetryAfter);
        AssertNoRedisText(await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("GET", "99999999999999999999-0")]
    [InlineData("DELETE", "99999999999999999999-0")]
    [InlineData("GET", "18446744073709551616-0")]
    [InlineData("GET", "0-18446744073709551616")]
    [InlineData("DELETE", "1-18446744073709551616")]
    [InlineData("GET", "s18446744073709551616-1")]
    [InlineData("DELETE", "s1-18446744073709551616")]
    [InlineData("GET", "01-0")]
    [InlineData("GET", "1-00")]
    [InlineData("GET", "+1-0")]
    public async Task Jobs_DurableQueueIdOutsideRedisGrammar_Answers400NamingId(string method, string id)
    {
        await using var app = await StartAsync(new JobLog());

        using var response = await SendAsync(app, new HttpMethod(method), $"{Prefix}/{Durable}/jobs/{Uri.EscapeDataString(id)}");

        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.BadRequest, $"{(int)response.StatusCode}: {body}");
        using var problem = JsonDocument.Parse(body);
        Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty("id", out _));
        AssertNoRedisText(body);
    }

    [Theory]
    [InlineData("0-0")]
    [InlineData("18446744073709551615-18446744073709551615")]
    [InlineData("s18446744073709551615-18446744073709551615")]
    public async Task Jobs_DurableQueueLargestAndSmallestIds_AreUnknownJobs(string id)
    {
        await using var app = await StartAsync(new JobLog());

        using var get = await SendAsync(app, HttpMethod.Get, $"{Prefix}/{Durable}/jobs/{id}");
        using var delete = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{Durable}/jobs/{id}");

        Assert.Equal((HttpStatusCode.NotFound, HttpStatusCode.NotFound), (get.StatusCode, delete.StatusCode));
    }

    [Theory]
    [InlineData("jobs", "not-an-id")]
    [InlineData("jobs", "99999999999999999999-0")]
    [InlineData("default", "99999999999999999999")]
    [InlineData("default", "not-an-id")]
    public async Task CancelScheduled_MalformedId_Answers400NamingId(string queue, string id)
    {
        await using var app = await StartAsync(new JobLog());

        using var response = await SendAsync(app, HttpMethod.Delete, $"{Prefix}/{queue}/scheduled/{id}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty("id", out _));
    }

    [Theory]
    [InlineData("GET", "/dead-letters", null)]
    [InlineData("DELETE", "/dead-letters/1-0", null)]
    [InlineData("POST", "/dead-letters/1-0/requeue", null)]
    [InlineData("POST", "/dead-letters/delete", """{"ids":["1-0"]}""")]
    public async Task DeadLetterRoutes_RedisRefusesTheCall_Answer500WithoutRedisText(string method, string path, string? body)
    {
        using var logs = new LogCapture();
        await using var app = await StartAsync(new JobLog(), logs: logs);

        // The dead-letter stream replaced by a string: every command on it is a server error (WRONGTYPE), not an outage.
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        await redisClient.GetDatabase().StringSetAsync(DurableTestHost.DeadKey(app.Prefix), "not a stream");

        using var response = body is null
            ? await SendAsync(app, new HttpMethod(method), Prefix + "/" + Durable + path)
            : await PostJsonAsync(app, Prefix + "/" + Durable + path, body);

        string text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.InternalServerError, $"{(int)response.StatusCode}: {text}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        AssertNoRedisText(text);
        Assert.DoesNotContain("unavailable", text, StringComparison.OrdinalIgnoreCase);

        // The operator finds Redis's error in the log instead.
        var logged = Assert.Single(logs.Entries, e => e.Category == "WorkQueue.AspNetCore.Admin" && e.EventId.Id == 404);
        Assert.Contains("WRONGTYPE", logged.Exception?.Message, StringComparison.Ordinal);
        Assert.Contains("500", logged.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task TriggerRecurring_DurableQueueRedisUnreachable_Answers503WithoutRedisText()
    {
        var server = await RedisServer.StartAsync();
        await using var app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddRedisWarmup(o => o.Configuration = server.Configuration + ",syncTimeout=1000,asyncTimeout=1000,connectTimeout=1000");
                b.Services.AddWorkQueue()
                    .AddDurableQueue<NoOccurrenceHandler, RecurringOccurrence>("ticks", configureDurable: d => d.KeyPrefix = DurableTestHost.NewPrefix())
                    .AddRecurringJob<NoOccurrenceHandler>("nightly", "0 2 * * *", o => o.Queue = "ticks");
            },
            web => web.MapWorkQueueAdmin(Prefix));
        await server.DisposeAsync();

        using var request = new HttpRequestMessage(HttpMethod.Post, $"{Prefix}/recurring/nightly/trigger") { Content = new StringContent("{}", Encoding.UTF8, "application/json") };
        using var response = await app.Client.SendAsync(request);

        string text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.ServiceUnavailable, $"{(int)response.StatusCode}: {text}");
        Assert.NotNull(response.Headers.RetryAfter);
        AssertNoRedisText(text);
    }

    /// <summary>What StackExchange.Redis and Redis put in their errors: none of it may reach a client.</summary>
    private static void AssertNoRedisText(string body)
    {
        foreach (string text in new[] { "WRONGTYPE", "wrong kind of value", "ERR ", "Invalid stream ID", "No connection", "UnableToConnect", "SocketFailure", "EVALSHA", "127.0.0.1", "script:" })
        {
            Assert.DoesNotContain(text, body, StringComparison.Ordinal);
        }
    }

    private sealed class NoOccurrenceHandler : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }

    private static TestJobQueue Producer(DurableApp app) => new(app.Services.GetRequiredKeyedService<IWorkQueue>(Durable));

    private static async Task<HttpResponseMessage> SendAsync(DurableApp app, HttpMethod method, string path, string? contentType = "application/json")
    {
        using var request = new HttpRequestMessage(method, path);
        if (method != HttpMethod.Get)
        {
            request.Content = new StringContent("{}", Encoding.UTF8);
            request.Content.Headers.ContentType = contentType is null ? null : new System.Net.Http.Headers.MediaTypeHeaderValue(contentType);
        }

        return await app.Client.SendAsync(request);
    }

    private static async Task<HttpResponseMessage> PostJsonAsync(DurableApp app, string path, string body)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, path) { Content = new StringContent(body, Encoding.UTF8, "application/json") };
        return await app.Client.SendAsync(request);
    }

    private static async Task<JsonDocument> GetJsonAsync(DurableApp app, string path)
    {
        using var response = await app.Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync());
    }

    private static async Task<JsonElement[]> DeadLettersAsync(DurableApp app)
    {
        using var json = await GetJsonAsync(app, $"{Prefix}/{Durable}/dead-letters");
        return [.. json.RootElement.EnumerateArray().Select(e => e.Clone())];
    }

    private static async Task<string> SingleDeadLetterIdAsync(DurableApp app)
    {
        JsonElement[] letters = [];
        await Eventually.HoldsAsync(async () => (letters = await DeadLettersAsync(app)).Length == 1, "one dead letter listed");
        return letters[0].GetProperty("id").GetString()!;
    }

    /// <summary>Reads a queue's state until <paramref name="condition"/> holds for it, and returns that state.</summary>
    private static async Task<JsonElement> UntilAsync(DurableApp app, string path, Func<JsonElement, bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            using var json = await GetJsonAsync(app, path);
            var state = json.RootElement.Clone();
            if (condition(state))
            {
                return state;
            }

            Assert.True(DateTime.UtcNow < deadline, $"Timed out waiting for {what}; the last state was {state}");
            await Task.Delay(20);
        }
    }

    /// <summary>A figure of the <c>durable</c> section, or null while it has not been read from Redis.</summary>
    private static long? Long(JsonElement queue, string name) =>
        queue.GetProperty("durable").GetProperty(name) is { ValueKind: JsonValueKind.Number } value ? value.GetInt64() : null;

    private sealed class DurableApp(TestApp app, string prefix) : IAsyncDisposable
    {
        public string Prefix { get; } = prefix;

        public HttpClient Client => app.Client;

        public IServiceProvider Services => app.Services;

        public ValueTask DisposeAsync() => app.DisposeAsync();
    }
}
