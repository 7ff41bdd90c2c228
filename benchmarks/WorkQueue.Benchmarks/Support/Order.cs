namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The payload every scenario hands to its jobs: a reference type, as an order id wrapper or a DTO would be.
/// </summary>
/// <param name="id">The order id.</param>
public sealed class Order(int id)
{
    /// <summary>Gets the order id.</summary>
    public int Id { get; } = id;
}
