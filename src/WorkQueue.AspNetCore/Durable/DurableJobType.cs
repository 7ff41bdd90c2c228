using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using WorkQueue.Internal;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// A job type that durable queues can carry: its stable name (what a stored job is known by, across renames of the
/// code), how its payload is written and read, and what runs it.
/// </summary>
internal abstract class DurableJobType
{
    protected DurableJobType(string name) => Name = name;

    /// <summary>Gets the job type's name, as stored with each job (see <see cref="JobTypeEnvelope"/>) and as status and search show it.</summary>
    public string Name { get; }

    /// <summary>Gets the handler's type.</summary>
    public abstract Type HandlerType { get; }

    /// <summary>Gets the payload's type.</summary>
    public abstract Type PayloadType { get; }

    /// <summary>Gets the handler's name, as logs show it.</summary>
    public string HandlerName => HandlerType.FullName ?? HandlerType.Name;

    /// <summary>Gets the invoker that resolves the handler from a new scope and runs it.</summary>
    public abstract JobInvoker Invoker { get; }

    /// <summary>Reads a stored payload (the JSON, without its envelope); a payload that cannot be read gives a message saying why.</summary>
    public abstract bool TryRead(ReadOnlySpan<char> json, out object? payload, out string? error);

    /// <summary>Writes a recurring occurrence as the type's payload JSON, or returns <see langword="null"/> if the type carries another payload.</summary>
    public abstract string? WriteOccurrence(RecurringOccurrence occurrence);
}

/// <summary>A job type of <typeparamref name="TPayload"/> jobs run by <typeparamref name="THandler"/>.</summary>
internal sealed class DurableJobType<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload> : DurableJobType
    where THandler : class, IJobHandler<TPayload>
{
    public DurableJobType(string name, JsonTypeInfo<TPayload> typeInfo)
        : base(name)
    {
        TypeInfo = typeInfo;
    }

    public JsonTypeInfo<TPayload> TypeInfo { get; }

    public override Type HandlerType => typeof(THandler);

    public override Type PayloadType => typeof(TPayload);

    public override JobInvoker Invoker => ScopedHandlerInvoker<THandler, TPayload>.Instance;

    public string Write(TPayload payload) => JsonSerializer.Serialize(payload, TypeInfo);

    public override string? WriteOccurrence(RecurringOccurrence occurrence) =>
        occurrence is TPayload payload ? Write(payload) : null;

    public override bool TryRead(ReadOnlySpan<char> json, out object? payload, out string? error)
    {
        try
        {
            payload = JsonSerializer.Deserialize(json, TypeInfo);
            if (payload is null && default(TPayload) is not null)
            {
                error = $"Job type '{Name}': the payload is null; {typeof(TPayload).FullName} cannot be null.";
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
            error = $"Job type '{Name}': the payload cannot be read as {typeof(TPayload).FullName}: {ex.GetType().Name}: {ex.Message}";
            return false;
        }
    }
}
