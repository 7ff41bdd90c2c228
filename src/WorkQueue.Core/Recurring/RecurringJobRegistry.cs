namespace WorkQueue.Recurring;

/// <summary>The recurring jobs registered in code, kept in the service collection as one instance so that a duplicate id fails at registration.</summary>
internal sealed class RecurringJobRegistry
{
    private readonly Dictionary<string, RecurringJobDefinition> _definitions = new(StringComparer.OrdinalIgnoreCase);

    public IReadOnlyCollection<RecurringJobDefinition> Definitions => _definitions.Values;

    public void Add(RecurringJobDefinition definition)
    {
        if (!_definitions.TryAdd(definition.Id, definition))
        {
            throw new ArgumentException($"A recurring job with the id '{definition.Id}' is already registered (ids ignore case). Give each job its own id; to replace one at runtime, use IRecurringJobs.AddOrUpdate.", "id");
        }
    }
}
