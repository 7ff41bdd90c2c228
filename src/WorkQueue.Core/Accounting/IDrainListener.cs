namespace WorkQueue.Accounting;

/// <summary>Hears about every job that ends (or attempt that is rejected) while a queue drains.</summary>
internal interface IDrainListener
{
    void OnJobEnded();
}
