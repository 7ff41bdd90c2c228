using System.Diagnostics.CodeAnalysis;
using WorkQueue.Internal;

namespace WorkQueue.Recurring;

/// <summary>A recurring job as registered: validated, immutable; replacing a job replaces its definition.</summary>
internal sealed record RecurringJobDefinition(string Id, RecurringSchedule Schedule, string Queue, bool StartPaused, MissedOccurrencePolicy MissedOccurrences, JobInvoker Invoker, Type HandlerType)
{
    public static RecurringJobDefinition Create<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(string id, Func<string, RecurringSchedule> schedule, Action<RecurringJobOptions>? configure)
        where THandler : class, IJobHandler<RecurringOccurrence>
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(id);
        if (id[0] is '@' or '~')
        {
            // A durable queue keeps a job's last occurrence under "{id}" beside its shared schedule ("@{id}") and pause
            // ("~{id}") in one hash: "@x"'s last occurrence would be "x"'s schedule. Refused on every queue, so an id
            // means the same on both kinds and a queue can become durable without renaming its jobs.
            throw new ArgumentException($"A recurring job's id cannot start with '@' or '~' (reserved for what a durable queue stores beside the job): '{id}'.", nameof(id));
        }

        var options = new RecurringJobOptions();
        configure?.Invoke(options);
        ArgumentException.ThrowIfNullOrWhiteSpace(options.Queue, nameof(RecurringJobOptions.Queue));
        if (!Enum.IsDefined(options.MissedOccurrences))
        {
            throw new ArgumentOutOfRangeException(nameof(RecurringJobOptions.MissedOccurrences), options.MissedOccurrences, "RecurringJobOptions.MissedOccurrences must be RunOnce or Skip.");
        }
        return new RecurringJobDefinition(
            id,
            schedule(options.TimeZone),
            options.Queue,
            options.StartPaused,
            options.MissedOccurrences,
            RecurringJobInvoker<THandler>.Instance,
            typeof(THandler));
    }

    /// <summary>Gets the handler's name, as jobs describe it.</summary>
    public string Handler => HandlerType.FullName ?? HandlerType.Name;
}
