using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// What a durable consumer holds: entries held by stream id until settled, and the ones the heartbeat found lost, which
/// are forgotten, not started, when their job would start.
/// </summary>
public sealed class HeldEntriesTests
{
    [Fact]
    public void Hold_ThenTryGet_FindsTheEntryByStreamId()
    {
        var held = new HeldEntries();
        var entry = Entry("1-1");

        held.Hold(entry);

        Assert.True(held.TryGet("1-1", out var found));
        Assert.Same(entry, found);
        Assert.True(held.Contains("1-1"));
        Assert.False(held.Contains("1-2"));
        Assert.Equal(1, held.Count);
        Assert.False(held.IsEmpty);
    }

    [Fact]
    public void Forget_AHeldAndLostEntry_NeitherHeldNorLost()
    {
        var held = new HeldEntries();
        var entry = Entry("1-1");
        held.Hold(entry);
        Assert.True(held.MarkLost("1-1"));

        held.Forget(entry);

        Assert.True(held.IsEmpty);
        Assert.False(held.TryGet("1-1", out _));

        // Held again (fetched anew): the old lost mark went with the forgetting.
        held.Hold(entry);
        Assert.False(held.TakeIfLost("1-1"));
        Assert.True(held.Contains("1-1"));
    }

    [Fact]
    public void MarkLost_AnEntryNotHeld_NotMarked()
    {
        var held = new HeldEntries();

        Assert.False(held.MarkLost("1-1"));

        held.Hold(Entry("1-1"));
        Assert.False(held.TakeIfLost("1-1"));
    }

    [Fact]
    public void TakeIfLost_ALostEntry_ForgetsItOnce()
    {
        var held = new HeldEntries();
        held.Hold(Entry("1-1"));
        held.Hold(Entry("1-2"));
        held.MarkLost("1-1");

        Assert.True(held.TakeIfLost("1-1"));

        Assert.False(held.Contains("1-1"));
        Assert.False(held.TakeIfLost("1-1"));
        Assert.False(held.TakeIfLost("1-2"));
        Assert.True(held.Contains("1-2"));
    }

    [Fact]
    public void Snapshot_EntriesHeldAfterIt_NotInIt()
    {
        var held = new HeldEntries();
        held.Hold(Entry("1-1"));

        var snapshot = held.Snapshot();
        held.Hold(Entry("1-2"));

        Assert.Equal(["1-1"], snapshot.Select(static e => e.StreamId));
        Assert.Equal(2, held.Count);
    }

    private static DurableEntry Entry(string streamId) => new(streamId, streamId, "{}", attempt: 1, enqueuedAtMs: 0, deliveries: 1);
}
