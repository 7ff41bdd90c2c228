namespace WorkQueue.Queueing;

/// <summary>Keeps the most recent dead-lettered jobs, up to a cap.</summary>
internal sealed class DeadLetterStore
{
    private readonly Queue<DeadLetteredJob> _items = new();
    private readonly int _capacity;

    public DeadLetterStore(int capacity)
    {
        _capacity = capacity;
    }

    public void Add(DeadLetteredJob job)
    {
        if (_capacity == 0)
        {
            return;
        }

        lock (_items)
        {
            if (_items.Count == _capacity)
            {
                _items.Dequeue();
            }

            _items.Enqueue(job);
        }
    }

    public IReadOnlyList<DeadLetteredJob> ToList()
    {
        lock (_items)
        {
            return [.. _items];
        }
    }
}
