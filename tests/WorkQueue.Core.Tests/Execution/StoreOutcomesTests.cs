using WorkQueue.Accounting;
using WorkQueue.Durability;
using WorkQueue.Execution;
using WorkQueue.Internal;

namespace WorkQueue.Core.Tests.Execution;

public sealed class StoreOutcomesTests
{
    [Theory]
    [InlineData("Succeeded", "Completed", "Succeeded")]
    [InlineData("Canceled", "Canceled", "Canceled")]
    [InlineData("ScheduleRetry", "ScheduleRetry", "Returned")]
    [InlineData("DeadLettered", "DeadLetter", "DeadLettered")]
    [InlineData("NotStarted", "Release", "Returned")]
    [InlineData("StoppedWhileRunning", "Release", "Returned")]
    public void Outcome_EndsTheJob_CountedOnceInTheLedgerBeforeTheStoreIsToldOnce(string outcome, string storeCall, string ending)
    {
        var ledger = new JobLedger();
        var store = new RecordingStore(ledger);
        var outcomes = new StoreOutcomes(ledger, store);
        var item = Fetched(ledger);
        var error = new InvalidOperationException("it failed");

        switch (outcome)
        {
            case "Succeeded": outcomes.Succeeded(item); break;
            case "Canceled": outcomes.Canceled(item); break;
            case "ScheduleRetry": outcomes.ScheduleRetry(item, TimeSpan.FromSeconds(3), error); break;
            case "DeadLettered": outcomes.DeadLettered(item, new DeadLetteredJob(item.Describe("q"), error, DateTimeOffset.UnixEpoch), error); break;
            case "NotStarted": outcomes.NotStarted(item); break;
            case "StoppedWhileRunning": outcomes.StoppedWhileRunning(item); break;
            default: throw new ArgumentOutOfRangeException(nameof(outcome));
        }

        // The ending was counted when the store heard of it: a drain that sees the job ended never misses its settlement.
        Assert.Equal([(storeCall, item.Id, 1L)], store.Calls);
        var totals = ledger.Totals;
        var endings = new Dictionary<string, long>
        {
            ["Succeeded"] = totals.Succeeded,
            ["Canceled"] = totals.Canceled,
            ["DeadLettered"] = totals.DeadLettered,
            ["Returned"] = totals.Returned,
            ["Abandoned"] = totals.Abandoned,
            ["Dropped"] = totals.Dropped,
        };
        Assert.Equal(1, endings[ending]);
        Assert.Equal(1, endings.Values.Sum());
        Assert.Equal(0, totals.Unfinished);
        if (outcome == "ScheduleRetry")
        {
            Assert.Equal((TimeSpan.FromSeconds(3), error), (store.RetryDelay, store.Error));
        }
        else if (outcome == "DeadLettered")
        {
            Assert.Same(error, store.Error);
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void TryStart_AsksTheStore_CountsNothing(bool storeLetsItStart)
    {
        var ledger = new JobLedger();
        var store = new RecordingStore(ledger) { StartAllowed = storeLetsItStart };
        var outcomes = new StoreOutcomes(ledger, store);
        var item = Fetched(ledger);

        Assert.Equal(storeLetsItStart, outcomes.TryStart(item));
        Assert.Equal([("TryStart", item.Id, 0L)], store.Calls);
        Assert.Equal(1, ledger.Totals.Unfinished);
    }

    [Fact]
    public void CanRetry_StoredRetriesSurviveTheStop_AlwaysTrue()
    {
        var ledger = new JobLedger();
        Assert.True(new StoreOutcomes(ledger, new RecordingStore(ledger)).CanRetry);
    }

    private static WorkItem Fetched(JobLedger ledger)
    {
        Action<CancellationToken> job = _ => { };
        return new WorkItem(SyncDelegateInvoker.Instance, job, null, ledger.Offer(), enqueuedTimestamp: 0, attempt: 1);
    }

    /// <summary>An <see cref="IJobStore"/> that records each settlement with the ledger's ended count at that moment.</summary>
    private sealed class RecordingStore(JobLedger ledger) : IJobStore
    {
        public List<(string Call, long Id, long EndedBefore)> Calls { get; } = [];

        public bool StartAllowed { get; init; } = true;

        public TimeSpan? RetryDelay { get; private set; }

        public Exception? Error { get; private set; }

        public IWorkQueue Producer => throw new NotSupportedException();

        public int PrefetchCapacity => 1;

        public void Start(IJobIntake intake) => throw new NotSupportedException();

        public bool TryStart(in WorkItem item)
        {
            Record("TryStart", item);
            return StartAllowed;
        }

        public void Completed(in WorkItem item) => Record("Completed", item);

        public void ScheduleRetry(in WorkItem item, TimeSpan delay, Exception error)
        {
            (RetryDelay, Error) = (delay, error);
            Record("ScheduleRetry", item);
        }

        public void DeadLetter(in WorkItem item, Exception error)
        {
            Error = error;
            Record("DeadLetter", item);
        }

        public void Canceled(in WorkItem item) => Record("Canceled", item);

        public void Release(in WorkItem item) => Record("Release", item);

        public void SetPaused(bool paused) => throw new NotSupportedException();

        public void StopFetching() => throw new NotSupportedException();

        public DurableQueueSnapshot GetSnapshot() => throw new NotSupportedException();

        public IRecurringOccurrenceStore? Recurring => null;

        public Task StopAsync(TimeSpan timeout) => throw new NotSupportedException();

        private void Record(string call, in WorkItem item) => Calls.Add((call, item.Id, ledger.ReadEnded()));
    }
}
