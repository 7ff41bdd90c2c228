namespace WorkQueue.Tests.Support;

/// <summary>Completes a task when <see cref="Signal"/> has been called a given number of times.</summary>
internal sealed class CountdownSignal
{
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _remaining;

    public CountdownSignal(int count)
    {
        _remaining = count;
        if (count == 0)
        {
            _done.SetResult();
        }
    }

    public Task Task => _done.Task;

    /// <summary>Gets how many signals are still awaited (for a timeout's message).</summary>
    public int Remaining => Volatile.Read(ref _remaining);

    public void Signal()
    {
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            _done.TrySetResult();
        }
    }
}
