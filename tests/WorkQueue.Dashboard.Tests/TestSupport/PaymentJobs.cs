using System.Collections.Concurrent;

namespace WorkQueue.Dashboard.Tests.TestSupport;

/// <summary>The durable queue's payload.</summary>
public sealed record PaymentJob(int N);

/// <summary>What the durable queue's handler does and did: shared by every instance (host) of one test.</summary>
public sealed class PaymentJobs
{
    private readonly ConcurrentDictionary<int, int> _calls = new();
    private readonly Lock _lock = new();
    private readonly List<(Func<bool> Condition, TaskCompletionSource Signal)> _waiters = [];
    private int _started;
    private int _succeeded;

    /// <summary>Gets or sets what a run does (after it is counted as started); completes at once by default.</summary>
    public Func<PaymentJob, int, CancellationToken, ValueTask> Behavior { get; set; } = static (_, _, _) => ValueTask.CompletedTask;

    public int Started => Volatile.Read(ref _started);

    public int Succeeded => Volatile.Read(ref _succeeded);

    public int CallsOf(int n) => _calls.TryGetValue(n, out int calls) ? calls : 0;

    public async ValueTask RunAsync(PaymentJob job, CancellationToken cancellationToken)
    {
        int call = _calls.AddOrUpdate(job.N, 1, static (_, c) => c + 1);
        Interlocked.Increment(ref _started);
        Notify();
        await Behavior(job, call, cancellationToken);
        Interlocked.Increment(ref _succeeded);
        Notify();
    }

    /// <summary>Completes when <paramref name="condition"/> holds (checked as runs start and end), or fails after <see cref="Wait.Generous"/>.</summary>
    public async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        var signal = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            _waiters.Add((condition, signal));
        }

        Notify();
        await Wait.ForAsync(signal.Task, $"{what} (started {Started}, succeeded {Succeeded})");
    }

    private void Notify()
    {
        lock (_lock)
        {
            _waiters.RemoveAll(w =>
            {
                if (!w.Condition())
                {
                    return false;
                }

                w.Signal.TrySetResult();
                return true;
            });
        }
    }
}

/// <summary>The durable queue's handler: does what the shared <see cref="PaymentJobs"/> says.</summary>
public sealed class PaymentJobHandler(PaymentJobs jobs) : IJobHandler<PaymentJob>
{
    public ValueTask ExecuteAsync(PaymentJob payload, CancellationToken cancellationToken) => jobs.RunAsync(payload, cancellationToken);
}
