using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using PayCallbackApi.Orders;
using PayCallbackApi.Tests.TestSupport;
using StackExchange.Redis;

namespace PayCallbackApi.Tests.Shutdown;

/// <summary>
/// A deploy under load (issue 9, part 3): the sample as its own process, SIGTERM while signed callbacks pour in and
/// their post-payment work is still queued in both queues. With the host's default shutdown timeout, every callback
/// answered 200 must have all four effects in Redis once the process has exited by itself.
/// </summary>
public sealed partial class GracefulShutdownTests(RedisServerFixture redis, ITestOutputHelper output) : IClassFixture<RedisServerFixture>
{
    private const int Clients = 16;
    private const int Budget = 4000;           // callbacks the clients may send in all, before and after SIGTERM
    private const int SigtermAfterAnswered = 1000;

    // The legacy queue is made the bottleneck (8 threads x 20 ms provider calls, 64 places, Wait mode), so payments
    // jobs wait on it and payments backs up: at SIGTERM both queues hold accepted work, and payments' jobs still have
    // to hand their SMS and delivery to legacy while the two stop. About 200 callbacks/s drain: a few seconds here.
    private static readonly Dictionary<string, string> Settings = new()
    {
        ["PayCallback__ProviderLatencyMs"] = "20",
        ["WorkQueue__Queues__legacy__MinWorkers"] = "4",
        ["WorkQueue__Queues__legacy__MaxWorkers"] = "8",
        ["WorkQueue__Queues__legacy__Capacity"] = "64",
    };

    [UnixFact]
    public async Task Sigterm_UnderLoad_EveryCallbackAnswered200GetsAllFourEffects()
    {
        await using var app = await SampleProcess.StartAsync(redis.Server, Settings);
        using var http = new HttpClient { BaseAddress = app.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
        string run = Guid.NewGuid().ToString("N")[..8];
        var answered = new ConcurrentQueue<string>();
        var otherAnswers = new ConcurrentQueue<HttpStatusCode>();
        var enoughAnswered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int sent = 0, failed = 0;

        async Task ClientAsync()
        {
            for (int n = Interlocked.Increment(ref sent); n <= Budget; n = Interlocked.Increment(ref sent))
            {
                string orderId = $"o-shutdown-{run}-{n}";
                try
                {
                    using var response = await http.SendAsync(PayCallbackApp.SignedCallback(PayCallbackApp.Body(orderId, $"p-shutdown-{run}-{n}")));
                    if (response.StatusCode == HttpStatusCode.OK && await response.Content.ReadAsStringAsync() == """{"code":"SUCCESS"}""")
                    {
                        answered.Enqueue(orderId);
                        if (answered.Count >= SigtermAfterAnswered)
                        {
                            enoughAnswered.TrySetResult();
                        }
                    }
                    else if (response.StatusCode != HttpStatusCode.ServiceUnavailable)
                    {
                        otherAnswers.Enqueue(response.StatusCode);
                    }
                }
                catch (Exception ex) when (ex is HttpRequestException or TaskCanceledException)
                {
                    // The app stopped listening or closed the connection: no answer, so no promise was made.
                    Interlocked.Increment(ref failed);
                }
            }
        }

        var clients = Task.WhenAll(Enumerable.Range(0, Clients).Select(_ => Task.Run(ClientAsync)));
        await Wait.ForAsync(Task.WhenAny(enoughAnswered.Task, clients), $"{SigtermAfterAnswered} callbacks answered 200");
        Assert.True(enoughAnswered.Task.IsCompleted, $"The clients ran out of callbacks with only {answered.Count} answered 200.");

        var (acceptedAtSigterm, completedAtSigterm) = await OrderChecks.CountersAsync(redis.Server);
        await app.SendSigtermAsync();
        int exitCode = await app.WaitForExitAsync(TimeSpan.FromSeconds(90));   // the host's deadline is 30 s
        await Wait.ForAsync(clients, "the clients to run out of callbacks");

        var log = app.Log;
        output.WriteLine($"sent {Math.Min(sent, Budget)}, answered 200: {answered.Count}, no answer: {failed}; at SIGTERM accepted {acceptedAtSigterm}, completed {completedAtSigterm}");
        foreach (var line in log.Where(l => l.Contains("Application is shutting down", StringComparison.Ordinal) || QueueStopLine().IsMatch(l)))
        {
            output.WriteLine(line);
        }

        // The test proves something only if accepted work was still queued in payments when the signal came.
        Assert.True(acceptedAtSigterm > completedAtSigterm, $"Nothing was in flight at SIGTERM ({acceptedAtSigterm} accepted, {completedAtSigterm} completed).");
        var stopping = log.Select(l => PaymentsStoppingLine().Match(l)).Single(m => m.Success);
        Assert.True(int.Parse(stopping.Groups[1].Value, CultureInfo.InvariantCulture) > 0, $"'payments' had nothing queued when it began to stop: {stopping.Value}");

        Assert.Equal(0, exitCode);
        Assert.Empty(otherAnswers);
        Assert.Contains(log, l => l.Contains("Queue 'payments' drained and stopped", StringComparison.Ordinal));
        Assert.Contains(log, l => l.Contains("Queue 'legacy' drained and stopped", StringComparison.Ordinal));
        Assert.DoesNotContain(log, l => l.Contains("did not complete before shutdown", StringComparison.Ordinal));

        var incomplete = await OrderChecks.IncompleteAsync(redis.Server, [.. answered]);
        Assert.True(incomplete.Count == 0, $"{incomplete.Count} of {answered.Count} callbacks answered 200 lack effects, e.g. {string.Join("; ", incomplete.Take(5))}");
        var (accepted, completed) = await OrderChecks.CountersAsync(redis.Server);
        Assert.Equal(accepted, completed);
    }

    [GeneratedRegex(@"Queue '[^']+' (stopping|drained|stopped)")]
    private static partial Regex QueueStopLine();

    [GeneratedRegex(@"Queue 'payments' stopping: (\d+) queued")]
    private static partial Regex PaymentsStoppingLine();
}
