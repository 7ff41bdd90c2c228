using BenchmarkDotNet.Attributes;
using WorkQueue.Benchmarks.Support;

namespace WorkQueue.Benchmarks;

/// <summary>
/// Scenario 9: what an idempotency key costs one in-memory enqueue (time and bytes per call, on the enqueuing thread),
/// against the same enqueue without a key, and what a refused duplicate costs.
/// </summary>
/// <remarks>
/// <para>
/// Measured as scenario 1 measures an enqueue: the queue is paused, so no job runs and no worker is woken while the
/// calls are timed; every iteration makes <see cref="InvocationsPerIteration"/> calls into a queue of capacity
/// <see cref="Capacity"/>, so nothing fills up. Every row calls the same
/// <see cref="IWorkQueue.EnqueueAsync{TPayload}(IJobHandler{TPayload}, TPayload, JobOptions, CancellationToken)"/>
/// with a new <see cref="JobOptions"/> per call (as callers write it); the keyed rows take their key from an array
/// built in the setup (<c>order-0</c>, <c>order-1</c>, ...), so formatting a key is not in the figure.
/// </para>
/// <para>
/// The cleanup after each iteration resumes the queue until every job has run (which releases every key: no
/// retention), and checks that each call did what its row claims: a new job per call without a key and with unique
/// keys, no job and the holder's id for every duplicate. A rejection or a wrong answer fails the benchmark.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[InvocationCount(InvocationsPerIteration, UnrollFactor)]
public class IdempotencyKeyBenchmarks
{
    /// <summary>The enqueues per iteration.</summary>
    public const int InvocationsPerIteration = 1 << 18;

    /// <summary>The bounded capacity of the queue, four times the enqueues per iteration.</summary>
    public const int Capacity = 1 << 20;

    private const int UnrollFactor = 16;
    private const string HeldKey = "order-held";
    private static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(60);

    private readonly Order _order = new(42);
    private readonly JobCounter _executed = new();
    private string[] _keys = null!;
    private WorkQueueHost _workQueue = null!;
    private CountingHandler _handler = null!;
    private string _holderId = string.Empty;
    private int _next;
    private long _submitted;
    private long _created;
    private long _wrongAnswers;
    private long _enqueuedBefore;

    [GlobalSetup]
    public void Setup()
    {
        _keys = new string[InvocationsPerIteration];
        for (int i = 0; i < _keys.Length; i++)
        {
            _keys[i] = $"order-{i}";
        }

        _handler = new CountingHandler(_executed);
        _workQueue = WorkQueueHost.StartFixed(workers: 1, Capacity);
        _workQueue.WaitForWorkers(1);
        _workQueue.Control.Pause();
    }

    [GlobalSetup(Target = nameof(DuplicateKey))]
    public void SetupHeldKey()
    {
        Setup();

        // The job that holds the key every measured call asks for: queued, never run (the queue stays paused).
        var held = _workQueue.Queue.EnqueueAsync(_handler, _order, new JobOptions { IdempotencyKey = HeldKey }).AsTask().GetAwaiter().GetResult();
        if (!held.Created)
        {
            throw new InvalidOperationException("The held key's job was not created.");
        }

        _holderId = held.JobId;
        _enqueuedBefore = _workQueue.Control.GetSnapshot().Totals.Enqueued;
    }

    [GlobalCleanup]
    public void Cleanup() => _workQueue.Dispose();

    [Benchmark(Baseline = true, Description = "EnqueueAsync(handler, payload, new JobOptions()): no key")]
    public EnqueueResult NoKey() => Count(_workQueue.Queue.EnqueueAsync(_handler, _order, new JobOptions()));

    [Benchmark(Description = "EnqueueAsync(..., new JobOptions { IdempotencyKey = unique }): a new job")]
    public EnqueueResult UniqueKey() =>
        Count(_workQueue.Queue.EnqueueAsync(_handler, _order, new JobOptions { IdempotencyKey = _keys[_next++] }));

    [Benchmark(Description = "EnqueueAsync(..., new JobOptions { IdempotencyKey = held }): refused, holder's id")]
    public EnqueueResult DuplicateKey()
    {
        var result = Count(_workQueue.Queue.EnqueueAsync(_handler, _order, new JobOptions { IdempotencyKey = HeldKey }));
        if (result.JobId != _holderId)
        {
            _wrongAnswers++;
        }

        return result;
    }

    [IterationCleanup(Targets = [nameof(NoKey), nameof(UniqueKey)])]
    public void DrainCreated()
    {
        var queue = _workQueue.Control;
        queue.Resume();
        _executed.WaitFor(_submitted, DrainTimeout, "WorkQueue");
        queue.Pause();

        var totals = queue.GetSnapshot().Totals;
        if (_created != _submitted || totals.Rejected != 0 || totals.Enqueued - _enqueuedBefore != _submitted)
        {
            throw new InvalidOperationException(
                $"{_created} of {_submitted} calls created a job; the queue counted {totals.Enqueued - _enqueuedBefore} ({totals.Rejected} rejected): the benchmark measured something else.");
        }

        _enqueuedBefore = totals.Enqueued;
        Reset();
    }

    [IterationCleanup(Target = nameof(DuplicateKey))]
    public void CheckRefused()
    {
        long enqueued = _workQueue.Control.GetSnapshot().Totals.Enqueued;
        if (_created != 0 || _wrongAnswers != 0 || enqueued != _enqueuedBefore)
        {
            throw new InvalidOperationException(
                $"{_created} of {_submitted} duplicate calls created a job and {_wrongAnswers} named another holder; the queue counted {enqueued - _enqueuedBefore} new jobs.");
        }

        Reset();
    }

    // The queue is paused and far from full, so every call completes synchronously; a call that would not is a bug here.
    private EnqueueResult Count(ValueTask<EnqueueResult> call)
    {
        if (!call.IsCompletedSuccessfully)
        {
            throw new InvalidOperationException("An enqueue into a paused, nearly empty queue did not complete at once.");
        }

        var result = call.Result;
        _submitted++;
        if (result.Created)
        {
            _created++;
        }

        return result;
    }

    private void Reset()
    {
        _submitted = 0;
        _created = 0;
        _wrongAnswers = 0;
        _next = 0;
        _executed.Reset();
    }
}
