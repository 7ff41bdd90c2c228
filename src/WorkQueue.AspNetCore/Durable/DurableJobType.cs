using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The one job type of a durable queue: how its payload is written and read, and what runs it.</summary>
internal abstract class DurableJobType
{
    /// <summary>Gets the handler's name, as logs and dead letters show it.</summary>
    public abstract string HandlerName { get; }

    /// <summary>Gets the invoker that resolves the handler from a new scope and runs it.</summary>
    public abstract JobInvoker Invoker { get; }

    /// <summary>Reads a stored payload; a payload that cannot be read gives a message saying why.</summary>
    public abstract bool TryRead(string json, out object? payload, out string? error);

    /// <summary>Gets the handler type when the queue carries recurring occurrences (its payload is <see cref="RecurringOccurrence"/>), else <see langword="null"/>.</summary>
    public abstract Type? OccurrenceHandlerType { get; }

    /// <summary>Writes a recurring occurrence as the queue's payload, or returns <see langword="null"/> if the queue carries another type.</summary>
    public abstract string? WriteOccurrence(RecurringOccurrence occurrence);
}

/// <summary>A durable queue of <typeparamref name="TPayload"/> jobs run by <typeparamref name="THandler"/>.</summary>
internal sealed class DurableJobType<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload> : DurableJobType
    where THandler : class, IJobHandler<TPayload>
{
    private readonly string _queue;

    public DurableJobType(string queue, JsonTypeInfo<TPayload> typeInfo)
    {
        _queue = queue;
        TypeInfo = typeInfo;
    }

    public JsonTypeInfo<TPayload> TypeInfo { get; }

    public override string HandlerName => typeof(THandler).FullName ?? typeof(THandler).Name;

    public override JobInvoker Invoker => ScopedHandlerInvoker<THandler, TPayload>.Instance;

    public override Type? OccurrenceHandlerType => typeof(TPayload) == typeof(RecurringOccurrence) ? typeof(THandler) : null;

    public string Write(TPayload payload) => JsonSerializer.Serialize(payload, TypeInfo);

    public override string? WriteOccurrence(RecurringOccurrence occurrence) =>
        occurrence is TPayload payload ? Write(payload) : null;

    public override bool TryRead(string json, out object? payload, out string? error)
    {
        try
        {
            payload = JsonSerializer.Deserialize(json, TypeInfo);
            if (payload is null && default(TPayload) is not null)
            {
                error = $"Durable queue '{_queue}': the payload is null; {typeof(TPayload).FullName} cannot be null.";
                return false;
            }

            error = null;
            return true;
        }
        catch (Exception ex)
        {
            // Not only JsonException: a payload type's constructor or a converter may throw anything, and one bad
            // entry must be dead-lettered, never stop the queue.
            payload = null;
            error = $"Durable queue '{_queue}': the payload cannot be read as {typeof(TPayload).FullName}: {ex.GetType().Name}: {ex.Message}";
            return false;
        }
    }
}
