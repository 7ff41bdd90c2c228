using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// A durable queue's outcomes on their way to Redis: completions taken in batches for the round, the other outcomes one
/// by one in the order queued, and what Redis did not take put back at the back of its queue.
/// </summary>
public sealed class OutcomeQueueTests
{
    [Fact]
    public void TakeCompleted_Nothing_Null()
    {
        var queue = new OutcomeQueue();

        Assert.Null(queue.TakeCompleted(256));
        Assert.True(queue.IsEmpty);
    }

    [Fact]
    public void TakeCompleted_MoreThanABatch_TakesAtMostTheBatchInOrder()
    {
        var queue = new OutcomeQueue();
        for (int i = 1; i <= 5; i++)
        {
            queue.Completed(Entry($"1-{i}"));
        }

        var first = queue.TakeCompleted(3);
        var second = queue.TakeCompleted(3);

        Assert.Equal(["1-1", "1-2", "1-3"], first!.Select(static e => e.StreamId));
        Assert.Equal(["1-4", "1-5"], second!.Select(static e => e.StreamId));
        Assert.Null(queue.TakeCompleted(3));
        Assert.True(queue.IsEmpty);
    }

    [Fact]
    public void PutBackCompleted_ARefusedBatch_TakenAgainAfterTheOthers()
    {
        var queue = new OutcomeQueue();
        queue.Completed(Entry("1-1"));
        queue.Completed(Entry("1-2"));
        var taken = queue.TakeCompleted(1)!;
        queue.Completed(Entry("1-3"));

        queue.PutBackCompleted(taken);
        queue.PutBackCompleted(Entry("1-4"));

        Assert.False(queue.IsEmpty);
        Assert.Equal(["1-2", "1-3", "1-1", "1-4"], queue.TakeCompleted(10)!.Select(static e => e.StreamId));
    }

    [Fact]
    public void TryTake_EachKind_TheOutcomeAsQueued()
    {
        var queue = new OutcomeQueue();
        var entry = Entry("1-1");

        queue.Retry(entry, 1500, "System.Exception: boom");
        queue.DeadLetter(entry, "System.Exception: boom", "failed");
        queue.Cancel(entry);
        queue.Release(entry);
        queue.UnknownType(entry, "NewerJob");

        Assert.False(queue.IsEmpty);
        Assert.Null(queue.TakeCompleted(10));
        Assert.Equal(new Outcome(OutcomeKind.Retry, entry, 1500, "System.Exception: boom", null), Take(queue));
        Assert.Equal(new Outcome(OutcomeKind.DeadLetter, entry, 0, "System.Exception: boom", "failed"), Take(queue));
        Assert.Equal(new Outcome(OutcomeKind.Cancel, entry, 0, null, null), Take(queue));
        Assert.Equal(new Outcome(OutcomeKind.Release, entry, 0, null, null), Take(queue));
        Assert.Equal(new Outcome(OutcomeKind.UnknownType, entry, 0, "NewerJob", null), Take(queue));
        Assert.False(queue.TryTake(out _));
        Assert.True(queue.IsEmpty);
    }

    [Fact]
    public void PutBack_ARefusedOutcome_GoesBehindTheOthers()
    {
        var queue = new OutcomeQueue();
        queue.Cancel(Entry("1-1"));
        queue.Cancel(Entry("1-2"));

        queue.PutBack(Take(queue));

        Assert.Equal("1-2", Take(queue).Entry.StreamId);
        Assert.Equal("1-1", Take(queue).Entry.StreamId);
    }

    private static Outcome Take(OutcomeQueue queue)
    {
        Assert.True(queue.TryTake(out var outcome));
        return outcome;
    }

    private static DurableEntry Entry(string streamId) => new(streamId, streamId, "{}", attempt: 1, enqueuedAtMs: 0, deliveries: 1);
}
