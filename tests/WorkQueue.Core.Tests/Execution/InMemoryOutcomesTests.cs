using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Accounting;
using WorkQueue.Execution;
using WorkQueue.Internal;
using WorkQueue.Queueing;
using WorkQueue.Scheduling;
using WorkQueue.Workers;

namespace WorkQueue.Core.Tests.Execution;

public sealed class InMemoryOutcomesTests
{
    private readonly FakeTimeProvider _time = new();
    private readonly JobLedger _ledger = new();
    private readonly DeadLetterStore _deadLetters = new(capacity: 10);
    private readonly AbandonFlag _abandoning = new();
    private readonly List<WorkItem> _due = [];
    private readonly RetryScheduler _retries;
    private readonly InMemoryOutcomes _outcomes;

    public InMemoryOutcomesTests()
    {
        var abandoned = new AbandonReporter("q", _ledger, NullLogger.Instance);
        _retries = new RetryScheduler(_time, _due.Add, abandoned.Report);
        _outcomes = new InMemoryOutcomes(_ledger, _retries, _deadLetters, abandoned, _abandoning);
    }

    [Fact]
    public void DeadLettered_JobIsKeptBeforeItIsCounted_DrainThatSeesTheCountFindsIt()
    {
        var item = Accepted();
        var error = new InvalidOperationException("it failed");
        var job = new DeadLetteredJob(item.Describe("q"), error, DateTimeOffset.UnixEpoch);
        var drain = new DeadLettersAtEachEnding(_deadLetters);
        _ledger.Attach(drain);

        _outcomes.DeadLettered(item, job, error);

        Assert.Equal([1], drain.Seen);
        Assert.Same(job, Assert.Single(_deadLetters.ToList()));
        Assert.Equal((1L, 0L), (_ledger.Totals.DeadLettered, _ledger.Totals.Unfinished));
    }

    [Fact]
    public void ScheduleRetry_DelayPasses_JobIsHandedBackForItsNextAttemptAndNotEnded()
    {
        var item = Accepted();

        _outcomes.ScheduleRetry(item, TimeSpan.FromSeconds(2), new InvalidOperationException("it failed"));
        Assert.Equal((1, 1L), (_retries.Count, _ledger.Totals.Unfinished));
        _time.Advance(TimeSpan.FromSeconds(2));

        var due = Assert.Single(_due);
        Assert.Equal((item.Id, 2), (due.Id, due.Attempt));
        Assert.Equal(1, _ledger.Totals.Unfinished);
    }

    [Theory]
    [InlineData(false, AbandonReason.NotStarted)]
    [InlineData(true, AbandonReason.Canceled)]
    public void CutShortByTheStop_ReportedAbandonedWithItsReason(bool wasRunning, AbandonReason reason)
    {
        var item = Accepted();

        if (wasRunning)
        {
            _outcomes.StoppedWhileRunning(item);
        }
        else
        {
            _outcomes.NotStarted(item);
        }

        var abandoned = Assert.Single(_ledger.AbandonedJobs);
        Assert.Equal((JobIds.Format(item.Id), reason), (abandoned.Job.Id, abandoned.Reason));
        Assert.Equal((1L, 0L), (_ledger.Totals.Abandoned, _ledger.Totals.Unfinished));
    }

    [Fact]
    public void CanRetry_QueueAbandons_NoLongerRetries()
    {
        Assert.True(_outcomes.TryStart(Accepted()));
        Assert.True(_outcomes.CanRetry);

        _abandoning.Set();

        Assert.False(_outcomes.CanRetry);
    }

    private WorkItem Accepted()
    {
        Action<CancellationToken> job = _ => { };
        return new WorkItem(SyncDelegateInvoker.Instance, job, null, _ledger.Offer(), _time.GetTimestamp(), attempt: 1);
    }

    private sealed class DeadLettersAtEachEnding(DeadLetterStore deadLetters) : IDrainListener
    {
        public List<int> Seen { get; } = [];

        public void OnJobEnded() => Seen.Add(deadLetters.ToList().Count);
    }
}
