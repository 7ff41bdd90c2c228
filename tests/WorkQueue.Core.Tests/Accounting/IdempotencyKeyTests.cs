using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Core.Tests.TestSupport;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace WorkQueue.Core.Tests.Accounting;

/// <summary>Idempotency keys on an in-memory queue (<see cref="JobOptions.IdempotencyKey"/>): one unfinished job per key.</summary>
public sealed class IdempotencyKeyTests
{
    private readonly FakeTimeProvider _time = new();

    [Fact]
    public async Task EnqueueAsync_SameKeyWhileTheFirstIsUnfinished_AddsNoJobAndNamesTheHolder()
    {
        await using var harness = Start();
        using var gate = new Gate();
        var handler = new GateHandler(gate);
        var first = await harness.Queue.EnqueueAsync(handler, "a", Key("order-42"));
        await Wait.ForAsync(gate.EnteredAsync(1), "the first job to run");

        var second = await harness.Queue.EnqueueAsync(handler, "b", Key("order-42"));
        Assert.Equal((first.JobId, false), (second.JobId, second.Created));
        Assert.True(first.Created);

        gate.Open();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the first job to end");
        var third = await harness.Queue.EnqueueAsync(handler, "c", Key("order-42"));
        Assert.True(third.Created);
        Assert.NotEqual(first.JobId, third.JobId);
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 2, "the third job to end");
        Assert.Equal(["a", "c"], handler.Payloads);
        Assert.Equal(2, harness.Control.GetSnapshot().Totals.Enqueued);
    }

    [Fact]
    public async Task Retention_KeyStaysHeldForTheWindowAfterASuccess()
    {
        await using var harness = Start(o => o.IdempotencyKeyRetention = TimeSpan.FromMinutes(10));
        var handler = new GateHandler(null);
        var first = await harness.Queue.EnqueueAsync(handler, "a", Key("k"));
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 1, "the job to succeed");

        _time.Advance(TimeSpan.FromMinutes(9));
        Assert.Equal(new EnqueueResult(first.JobId, false), await harness.Queue.EnqueueAsync(handler, "b", Key("k")));
        _time.Advance(TimeSpan.FromMinutes(1));
        Assert.True((await harness.Queue.EnqueueAsync(handler, "c", Key("k"))).Created);
    }

    [Fact]
    public async Task RetryingJob_KeepsItsKey_DeadLetteredJob_ReleasesIt()
    {
        await using var harness = Start(o => { o.Retry.MaxAttempts = 2; o.Retry.BaseDelay = TimeSpan.FromSeconds(10); });
        var failing = new FailingHandler();
        var first = await harness.Queue.EnqueueAsync(failing, "x", Key("k"));
        await Wait.UntilAsync(() => harness.Runtime.PendingRetries == 1, "the retry to wait");

        Assert.False((await harness.Queue.EnqueueAsync(failing, "y", Key("k"))).Created);
        _time.Advance(TimeSpan.FromSeconds(10));
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.DeadLettered == 1, "the job to be dead-lettered");

        var again = await harness.Queue.EnqueueAsync(new GateHandler(null), "z", Key("k"));
        Assert.True(again.Created);
        Assert.NotEqual(first.JobId, again.JobId);
    }

    [Fact]
    public async Task ScheduledWithAKey_HoldsItUntilCancelled()
    {
        await using var harness = Start();
        var handler = new GateHandler(null);
        var reminder = await harness.Queue.EnqueueAsync(handler, "remind", new JobOptions { IdempotencyKey = "remind:order-42", Delay = TimeSpan.FromMinutes(30) });
        Assert.Equal(1, harness.Control.GetSnapshot().Scheduled);
        Assert.Equal(new EnqueueResult(reminder.JobId, false), await harness.Queue.EnqueueAsync(handler, "again", new JobOptions { IdempotencyKey = "remind:order-42", Delay = TimeSpan.FromMinutes(30) }));

        Assert.True(harness.Queue.CancelScheduled(reminder.JobId));
        Assert.True((await harness.Queue.EnqueueAsync(handler, "new", new JobOptions { IdempotencyKey = "remind:order-42", RunAt = _time.GetUtcNow().AddMinutes(5) })).Created);
    }

    [Fact]
    public async Task RefusedEnqueue_ReleasesItsKey()
    {
        await using var harness = Start(o => { o.Capacity = 1; o.FullMode = QueueFullMode.Reject; });
        using var gate = new Gate();
        var blocker = new GateHandler(gate);
        await harness.Queue.EnqueueAsync(blocker, "running", Key("running"));
        await Wait.ForAsync(gate.EnteredAsync(1), "the thread to be busy");
        await harness.Queue.EnqueueAsync(blocker, "queued", Key("queued"));

        var full = await Assert.ThrowsAsync<JobRejectedException>(async () => await harness.Queue.EnqueueAsync(blocker, "refused", Key("k")));
        Assert.Equal(RejectionReason.QueueFull, full.Reason);
        gate.Open();
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().Totals.Succeeded == 2, "the queue to empty");
        Assert.True((await harness.Queue.EnqueueAsync(blocker, "later", Key("k"))).Created);
    }

    [Theory]
    [InlineData("")]
    [InlineData("line\nbreak")]
    [InlineData("tab\there")]
    public async Task EnqueueAsync_InvalidKey_ThrowsNamingOptions(string key)
    {
        await using var harness = Start();
        var ex = await Assert.ThrowsAsync<ArgumentException>(async () => await harness.Queue.EnqueueAsync(new GateHandler(null), "p", Key(key)));
        Assert.Equal("options", ex.ParamName);
        Assert.Contains("IdempotencyKey", ex.Message, StringComparison.Ordinal);
        Assert.Equal(0, harness.Control.GetSnapshot().Totals.Enqueued);
    }

    [Fact]
    public async Task EnqueueAsync_KeyTooLongOrDelayAndRunAt_ThrowsNamingTheSetting()
    {
        await using var harness = Start();
        var handler = new GateHandler(null);
        var longKey = await Assert.ThrowsAsync<ArgumentException>(async () => await harness.Queue.EnqueueAsync(handler, "p", Key(new string('k', JobOptions.MaxKeyLength + 1))));
        Assert.Contains("1 to 256 characters", longKey.Message, StringComparison.Ordinal);
        var both = await Assert.ThrowsAsync<ArgumentException>(async () => await harness.Queue.EnqueueAsync(handler, "p", new JobOptions { Delay = TimeSpan.FromSeconds(1), RunAt = _time.GetUtcNow() }));
        Assert.Contains("Delay and JobOptions.RunAt", both.Message, StringComparison.Ordinal);
        Assert.True((await harness.Queue.EnqueueAsync(handler, "p", Key(new string('k', JobOptions.MaxKeyLength)))).Created);
    }

    [Theory]
    [InlineData("order-", 0xD800, "")]
    [InlineData("", 0xDC00, "order")]
    [InlineData("order-", 0xDBFF, "x")]        // a high surrogate followed by no low one
    // Built here: attribute strings are stored as UTF-8, which would turn a lone surrogate into U+FFFD.
    public async Task EnqueueAsync_KeyWithALoneSurrogate_ThrowsNamingOptions(string before, int surrogate, string after)
    {
        string key = before + (char)surrogate + after;
        await using var harness = Start();
        var handler = new GateHandler(null);

        var ex = await Assert.ThrowsAsync<ArgumentException>(async () => await harness.Queue.EnqueueAsync(handler, "p", Key(key)));

        Assert.Equal("options", ex.ParamName);
        Assert.Contains("lone surrogate", ex.Message, StringComparison.Ordinal);
        Assert.True((await harness.Queue.EnqueueAsync(handler, "p", Key("order-\uD83D\uDE00"))).Created);   // a surrogate pair is fine
    }

    [Fact]
    public async Task Metrics_DeduplicatedCounter()
    {
        await using var harness = Start();
        using var gate = new Gate();
        using var deduplicated = new MetricCollector<long>(harness.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>(), WorkQueueMetrics.MeterName, "workqueue.job.deduplicated");
        await harness.Queue.EnqueueAsync(new GateHandler(gate), "a", Key("k"));
        await harness.Queue.EnqueueAsync(new GateHandler(gate), "b", Key("k"));
        await harness.Queue.EnqueueAsync(new GateHandler(gate), "c", Key("k"));
        Assert.Equal(2, deduplicated.GetMeasurementSnapshot().Sum(m => m.Value));
        gate.Open();
    }

    private static JobOptions Key(string key) => new() { IdempotencyKey = key };

    private QueueHarness Start(Action<WorkQueueOptions>? configure = null) =>
        QueueHarness.Start(
            o =>
            {
                o.MinWorkers = 1;
                o.MaxWorkers = 1;
                configure?.Invoke(o);
            },
            addServices: s => s.AddSingleton(new WorkQueueEnvironment(_time, () => 0.5)));

    private sealed class GateHandler(Gate? gate) : IJobHandler<string>
    {
        private readonly ConcurrentQueue<string> _payloads = new();

        public IReadOnlyCollection<string> Payloads => _payloads;

        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            _payloads.Enqueue(payload);
            gate?.Block(cancellationToken);
            return ValueTask.CompletedTask;
        }
    }

    private sealed class FailingHandler : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken) => throw new InvalidOperationException("fails");
    }
}
