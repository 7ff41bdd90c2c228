using System.Collections.Concurrent;
using System.Diagnostics;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Queueing;

public sealed class QueueProducerTests(ITestOutputHelper output)
{
    private const int Calls = 200_000;

    // A budget, not an expectation: the test stops early on a slow machine, having made fewer calls.
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(8);

    /// <summary>
    /// Every call of a full Wait-mode queue waits for space while another thread cancels its token after a random spin, so
    /// some cancellations land while the channel's write is registering on the token. There, .NET 10's bounded channel
    /// ends the write as cancelled yet lets the next read move its item into the channel (dotnet/runtime#132094): the
    /// caller was told the job was not taken, the ledger counted a rejection, and the job ran. Before the fix this
    /// failed within a few thousand calls (the seed-6 failure of the stress test: "Enqueued 1826 vs 1827").
    /// </summary>
    [Fact]
    public async Task EnqueueAsync_WaitModeTokenCancelledAsTheWriteRegisters_JobNotTakenNeverRuns()
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.Capacity = 1;
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
            o.AutoScale.Enabled = false;
            o.FullMode = QueueFullMode.Wait;
        });
        var handler = new RecordingHandler();
        var notTaken = new List<int>();
        int taken = 0;
        CancellationTokenSource? current = null;
        bool done = false;
        var canceller = new Thread(() =>
        {
            var random = new Random(20261123);
            while (!Volatile.Read(ref done))
            {
                if (Interlocked.Exchange(ref current, null) is not { } source)
                {
                    Thread.SpinWait(1);
                    continue;
                }

                Thread.SpinWait(random.Next(0, 100));
                source.Cancel();
            }
        })
        { IsBackground = true, Name = "canceller" };
        canceller.Start();

        var elapsed = Stopwatch.StartNew();
        for (int id = 0; id < Calls && elapsed.Elapsed < Budget; id++)
        {
            // Not disposed: the canceller may cancel a source after its call returned.
            var source = new CancellationTokenSource();
            Volatile.Write(ref current, source);
            try
            {
                await harness.Queue.EnqueueAsync(handler, id, source.Token);
                taken++;
            }
            catch (OperationCanceledException)
            {
                notTaken.Add(id);
            }
        }

        Volatile.Write(ref done, true);
        canceller.Join();

        // Not a stop: a stop's drain check never sees the queue drained when a rejected job ran (accepted and ended then
        // never match), so it would only time out.
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded >= taken, "every job taken to run");
        var ranButNotTaken = notTaken.Where(handler.Ran.ContainsKey).ToList();
        var totals = harness.Control.GetSnapshot().Totals;
        output.WriteLine($"{taken + notTaken.Count} calls in {elapsed.Elapsed.TotalSeconds:F1} s: {taken} taken, {notTaken.Count} cancelled, {ranButNotTaken.Count} of those ran; {totals}");
        Assert.True(notTaken.Count > 0, "no call was cancelled, so the run proves nothing");
        Assert.True(ranButNotTaken.Count == 0, $"{ranButNotTaken.Count} job(s) ran whose callers were told they were not taken: {string.Join(", ", ranButNotTaken.Take(10))}");
        Assert.Equal((taken, notTaken.Count), ((int)totals.Enqueued, (int)totals.Rejected));
        Assert.Equal(totals.Enqueued, totals.Succeeded);
    }

    private sealed class RecordingHandler : IJobHandler<int>
    {
        public ConcurrentDictionary<int, byte> Ran { get; } = new();

        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            Ran[payload] = 0;
            Thread.SpinWait(200);
            return default;
        }
    }
}
