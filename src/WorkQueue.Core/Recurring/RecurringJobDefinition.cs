using WorkQueue.Internal;

namespace WorkQueue.Recurring;

/// <summary>A recurring job as registered: validated, immutable; replacing a job replaces its definition.</summary>
internal sealed record RecurringJobDefinition(string Id, RecurringSchedule Schedule, string Queue, bool StartPaused, JobInvoker Invoker, string Handler)
{
    public static RecurringJobDefinition Create<THandler>(string id, Func<string, RecurringSchedule> schedule, Action<RecurringJobOptions>? configure)
        where THandler : class, IJobHandler<RecurringOccurrence>
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(id);
        var options = new RecurringJobOptions();
        configure?.Invoke(options);
        ArgumentException.ThrowIfNullOrWhiteSpace(options.Queue, nameof(RecurringJobOptions.Queue));
        return new RecurringJobDefinition(
            id,
            schedule(options.TimeZone),
            options.Queue,
            options.StartPaused,
            RecurringJobInvoker<THandler>.Instance,
            typeof(THandler).FullName ?? typeof(THandler).Name);
    }
}
