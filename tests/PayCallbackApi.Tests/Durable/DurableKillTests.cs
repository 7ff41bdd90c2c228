using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using PayCallbackApi.Orders;
using PayCallbackApi.Tests.TestSupport;
using StackExchange.Redis;

namespace PayCallbackApi.Tests.Durable;

/// <summary>
/// Durable mode against a crash (issue 12, part 2): the sample as its own process under load, killed with SIGKILL while
/// accepted work is queued and running in both durable queues, then started again on the same Redis. Every callback
/// answered 200 before the kill must end with all four effects recorded; the provider calls repeated because of the
/// kill are counted (at least once), and duplicates of answered callbacks stay duplicates after the restart.
/// </summary>
public sealed class DurableKillTests(RedisServerFixture redis, ITestOutputHelper output) : IClassFixture<RedisServerFixture>
{
    private const int Clients = 16;
    private const int KillAfterAnswered = 600;

    // The legacy queue is the bottleneck (8 threads x 20 ms provider calls), so at the kill the dead process holds
    // fetched jobs in both queues and Redis holds a backlog. Claims time out after 3 s, so the restarted process (a new
    // consumer) reclaims the dead one's jobs within a few seconds. Redis calls time out after 900 ms, as a 3 s claim with a
    // 1 s heartbeat requires (validated at startup: 2 x heartbeat + the longest Redis timeout).
    private Dictionary<string, string> Settings => new()
    {
        ["ConnectionStrings__Redis"] = redis.Server.Configuration + ",syncTimeout=900,asyncTimeout=900",
        ["PayCallback__Mode"] = nameof(ProcessingMode.Durable),
        ["PayCallback__ProviderLatencyMs"] = "20",
        ["WorkQueue__Queues__legacy__MinWorkers"] = "4",
        ["WorkQueue__Queues__legacy__MaxWorkers"] = "8",
        ["WorkQueue__Queues__legacy__Durable__ClaimTimeout"] = "00:00:03",
        ["WorkQueue__Queues__legacy__Durable__HeartbeatInterval"] = "00:00:01",
        ["WorkQueue__Queues__payments__Durable__ClaimTimeout"] = "00:00:03",
        ["WorkQueue__Queues__payments__Durable__HeartbeatInterval"] = "00:00:01",
    };

    [UnixFact]
    public async Task Sigkill_UnderLoad_EveryCallbackAnswered200GetsAllFourEffectsAfterARestart()
    {
        string run = Guid.NewGuid().ToString("N")[..8];
        var answered = new ConcurrentQueue<(string OrderId, string Body)>();
        var otherAnswers = new ConcurrentQueue<HttpStatusCode>();
        var enoughAnswered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var killed = new CancellationTokenSource();
        int sent = 0, failed = 0;

        var first = await SampleProcess.StartAsync(redis.Server, Settings);
        long acceptedAtKill, completedAtKill;
        var killWatch = new Stopwatch();
        try
        {
            using var http = new HttpClient { BaseAddress = first.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };

            async Task ClientAsync()
            {
                while (!killed.IsCancellationRequested)
                {
                    int n = Interlocked.Increment(ref sent);
                    string orderId = $"o-kill-{run}-{n}";
                    string body = PayCallbackApp.Body(orderId, $"p-kill-{run}-{n}");
                    try
                    {
                        using var response = await http.SendAsync(PayCallbackApp.SignedCallback(body), killed.Token);
                        if (response.StatusCode == HttpStatusCode.OK)
                        {
                            answered.Enqueue((orderId, body));
                            if (answered.Count >= KillAfterAnswered)
                            {
                                enoughAnswered.TrySetResult();
                            }
                        }
                        else if (response.StatusCode != HttpStatusCode.ServiceUnavailable)
                        {
                            otherAnswers.Enqueue(response.StatusCode);
                        }
                    }
                    catch (Exception ex) when (ex is HttpRequestException or OperationCanceledException)
                    {
                        // Killed mid-request: no answer, so no promise was made.
                        Interlocked.Increment(ref failed);
                    }
                }
            }

            var clients = Task.WhenAll(Enumerable.Range(0, Clients).Select(_ => Task.Run(ClientAsync)));
            await Wait.ForAsync(enoughAnswered.Task, $"{KillAfterAnswered} callbacks answered 200");
            await first.KillAsync();
            killWatch.Start();
            (acceptedAtKill, completedAtKill) = await OrderChecks.CountersAsync(redis.Server);
            killed.Cancel();
            await Wait.ForAsync(clients, "the clients to stop");
        }
        finally
        {
            await first.DisposeAsync();
        }

        // The test proves something only if accepted work was unfinished when the process died.
        Assert.True(acceptedAtKill > completedAtKill, $"Nothing was in flight at the kill ({acceptedAtKill} accepted, {completedAtKill} completed).");
        Assert.Empty(otherAnswers);
        var promised = answered.ToArray();
        Assert.Equal(promised.Length, promised.DistinctBy(a => a.OrderId).Count());

        await using var second = await SampleProcess.StartAsync(redis.Server, Settings);
        double restartedAfter = killWatch.Elapsed.TotalSeconds;
        using (var http = new HttpClient { BaseAddress = second.BaseAddress, Timeout = TimeSpan.FromSeconds(30) })
        {
            // The gateway resends some callbacks it already got 200 for: still answered 200, and no new work.
            foreach (var (_, body) in promised.Take(50))
            {
                using var response = await http.SendAsync(PayCallbackApp.SignedCallback(body));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
        }

        List<string> incomplete = [];
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < TimeSpan.FromSeconds(120))
        {
            incomplete = await OrderChecks.IncompleteAsync(redis.Server, [.. promised.Select(a => a.OrderId)]);
            if (incomplete.Count == 0)
            {
                break;
            }

            await Task.Delay(250);
        }

        double recoveredAfter = killWatch.Elapsed.TotalSeconds;
        var (accepted, completed) = await OrderChecks.CountersAsync(redis.Server);
        long repeats = await RepeatsAsync();
        output.WriteLine($"sent {sent}, answered 200 before the kill: {promised.Length}, no answer: {failed}; at the kill accepted {acceptedAtKill}, completed {completedAtKill}");
        output.WriteLine($"restarted {restartedAfter:F1} s after the kill; every answered callback complete {recoveredAfter:F1} s after it; accepted {accepted}, completed {completed}, provider calls repeated {repeats}");

        Assert.True(incomplete.Count == 0, $"{incomplete.Count} of {promised.Length} callbacks answered 200 lack effects 120 s after the restart, e.g. {string.Join("; ", incomplete.Take(5))}");

        // A kill between the XADD and the commit leaves a job that runs but was never answered 200 (nor counted as
        // accepted): completed may exceed accepted, never the reverse.
        Assert.True(completed >= accepted, $"accepted {accepted} > completed {completed}");
        Assert.Equal(accepted, await CommittedAsync());
    }

    private async Task<long> RepeatsAsync()
    {
        await using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        var values = await mux.GetDatabase().StringGetAsync([OrderStore.RepeatCounter("sms"), OrderStore.RepeatCounter("delivery")]);
        return values.Sum(v => v.IsNull ? 0 : (long)v);
    }

    /// <summary>Orders marked accepted by a commit, counted by scanning them: must match the accepted counter.</summary>
    private async Task<long> CommittedAsync()
    {
        await using var mux = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        var db = mux.GetDatabase();
        long committed = 0;
        await foreach (var key in mux.GetServer(mux.GetEndPoints()[0]).KeysAsync(pattern: "pay:order:*", pageSize: 1000))
        {
            if (await db.HashGetAsync(key, "accepted") == "1")
            {
                committed++;
            }
        }

        return committed;
    }
}
