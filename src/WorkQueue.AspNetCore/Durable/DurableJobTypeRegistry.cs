using System.Diagnostics.CodeAnalysis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The job types durable queues can carry, registered with <c>AddJobType</c> (and by <c>AddDurableQueue&lt;THandler,
/// TPayload&gt;</c>), by name and by handler and payload. One instance per service collection, filled while services
/// are registered and only read afterwards.
/// </summary>
internal sealed class DurableJobTypeRegistry
{
    private readonly Dictionary<string, DurableJobType> _byName = new(StringComparer.Ordinal);
    private readonly Dictionary<(Type Handler, Type Payload), DurableJobType> _byHandler = [];

    /// <summary>Gets every registered job type.</summary>
    public IReadOnlyCollection<DurableJobType> All => _byName.Values;

    /// <summary>
    /// Registers <paramref name="type"/>, or returns the same registration made before (same name, handler and payload).
    /// </summary>
    /// <exception cref="ArgumentException">The name is taken by another handler, or the handler is registered under another name (the message names both).</exception>
    public DurableJobType Add(DurableJobType type, string paramName)
    {
        if (_byHandler.TryGetValue((type.HandlerType, type.PayloadType), out var registered))
        {
            return registered.Name == type.Name
                ? registered
                : throw new ArgumentException(
                    $"Job type '{type.Name}': handler {type.HandlerName} of {type.PayloadType.Name} is already registered as job type '{registered.Name}'. A handler has one job type name.",
                    paramName);
        }

        if (_byName.TryGetValue(type.Name, out registered))
        {
            throw new ArgumentException(
                $"Job type '{type.Name}' is already registered for handler {registered.HandlerName} of {registered.PayloadType.Name}; {type.HandlerName} of {type.PayloadType.Name} needs another name.",
                paramName);
        }

        _byName.Add(type.Name, type);
        _byHandler.Add((type.HandlerType, type.PayloadType), type);
        return type;
    }

    /// <summary>Finds a job type by its name.</summary>
    public bool TryGet(string name, [NotNullWhen(true)] out DurableJobType? type) => _byName.TryGetValue(name, out type);

    /// <summary>Finds the job type of a handler and payload.</summary>
    public bool TryGet(Type handler, Type payload, [NotNullWhen(true)] out DurableJobType? type) => _byHandler.TryGetValue((handler, payload), out type);
}

/// <summary>
/// The job types as one durable queue reads and writes them: any registered type, and the queue's default type (the
/// one it was declared with, if any), whose payloads are stored bare (see <see cref="JobTypeEnvelope"/>).
/// </summary>
internal sealed class QueueJobTypes(DurableJobTypeRegistry registry, DurableJobType? defaultType)
{
    /// <summary>Gets the queue's default job type, or <see langword="null"/> when it was declared without one.</summary>
    public DurableJobType? Default { get; } = defaultType;

    /// <summary>Gets every job type the queue can run.</summary>
    public IReadOnlyCollection<DurableJobType> All => registry.All;

    /// <summary>Writes a payload's JSON as the queue stores a job of <paramref name="type"/>, with the enqueuing activity's <paramref name="traceParent"/> if any.</summary>
    public string Write(DurableJobType type, string json, string? traceParent = null) =>
        JobTypeEnvelope.Write(ReferenceEquals(type, Default) ? null : type.Name, traceParent, json);

    /// <summary>Gets the job type's name a stored payload names ('' when it is bare and the queue has no default type).</summary>
    public string NameOf(string stored) => NameOrDefault(JobTypeEnvelope.Read(stored, out _));

    /// <summary>Gets the name of a job whose envelope, record or reply named <paramref name="named"/> (<see langword="null"/>: the default type; '' when the queue has none).</summary>
    public string NameOrDefault(string? named) => named ?? Default?.Name ?? string.Empty;

    /// <summary>Reads a stored payload: its job type (<see langword="null"/> when no registered type has its name) and JSON.</summary>
    public DurableJobType? Resolve(string stored, out string typeName, out ReadOnlySpan<char> json)
    {
        string? named = JobTypeEnvelope.Read(stored, out json);
        if (named is null)
        {
            typeName = Default?.Name ?? string.Empty;
            return Default;
        }

        typeName = named;
        return registry.TryGet(named, out var type) ? type : null;
    }

    /// <summary>Finds the job type of a handler and payload, or throws naming the queue and the registration to add.</summary>
    public DurableJobType<THandler, TPayload> Of<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(string queue)
        where THandler : class, IJobHandler<TPayload> =>
        registry.TryGet(typeof(THandler), typeof(TPayload), out var type)
            ? (DurableJobType<THandler, TPayload>)type
            : throw new InvalidOperationException(
                $"Durable queue '{queue}' cannot store a job of {typeof(THandler).FullName} with a {typeof(TPayload).Name} payload: no job type names it. " +
                $"Register it with builder.AddJobType<{typeof(THandler).Name}, {typeof(TPayload).Name}>() on every instance (a stored job is known by its job type's name, so any instance can run it).");

    /// <summary>Finds the job type that runs <paramref name="handlerType"/> with <see cref="RecurringOccurrence"/> payloads, if one is registered.</summary>
    public bool TryGetOccurrences(Type handlerType, [NotNullWhen(true)] out DurableJobType? type) =>
        registry.TryGet(handlerType, typeof(RecurringOccurrence), out type);
}
