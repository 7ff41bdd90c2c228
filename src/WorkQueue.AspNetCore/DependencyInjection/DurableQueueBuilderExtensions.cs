using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using StackExchange.Redis;
using WorkQueue;
using WorkQueue.AspNetCore;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Redis;
using WorkQueue.Internal;
using WorkQueue.Telemetry;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Adds durable queues, kept in Redis Streams, to WorkQueue.
/// </summary>
public static class DurableQueueBuilderExtensions
{
    /// <summary>
    /// Adds a durable queue whose default job type is <typeparamref name="TPayload"/> jobs run by
    /// <typeparamref name="THandler"/>: jobs are stored in a Redis stream before an enqueue
    /// (<see cref="IWorkQueue.EnqueueAsync{THandler, TPayload}(TPayload, CancellationToken)"/>) completes, every instance
    /// that declares the queue consumes it (one consumer group), and a job whose instance crashes is reclaimed and run by another. The
    /// same engine runs them as any queue: dedicated threads, concurrency limit, retries (kept in Redis), timeouts,
    /// metrics. Uses the shared connection of <see cref="RedisWarmupServiceCollectionExtensions.AddRedisWarmup"/>.
    /// </summary>
    /// <remarks>
    /// Jobs run at least once: handlers must be idempotent. <see cref="WorkQueueOptions.Capacity"/> applies to the
    /// queue's unfinished jobs in Redis; <see cref="QueueFullMode.DropOldest"/> is refused at startup. Resolve the producer
    /// as any queue's, <c>[FromKeyedServices("name")] IWorkQueue</c> or <see cref="IWorkQueueProvider.GetQueue(string)"/>;
    /// the queue carries other job types too (<see cref="AddJobType{THandler, TPayload}(IWorkQueueBuilder, string?)"/>). The
    /// default type's jobs are stored bare, without a type name, as 0.2 stored them. Adds a readiness health check (tag <see cref="WorkQueueHealthCheckTags.Ready"/>) named
    /// <c>workqueue-durable-{name}</c>, and a step to the Redis warm-up that creates the queue's consumer group, so it
    /// exists once the host has started (producer-only instances included), before anything is enqueued.
    /// <para>
    /// Payloads are written and read with System.Text.Json's web defaults (<see cref="JsonSerializerOptions.Web"/>),
    /// whose contract is read from <typeparamref name="TPayload"/> by reflection: in a trimmed or native AOT app, or for
    /// other JSON options, use
    /// <see cref="AddDurableQueue{THandler, TPayload}(IWorkQueueBuilder, string, JsonTypeInfo{TPayload}, Action{WorkQueueOptions}?, Action{DurableQueueOptions}?)"/>
    /// with a source-generated <c>JsonSerializerContext</c>'s <see cref="JsonTypeInfo{T}"/>.
    /// </para>
    /// </remarks>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each job (or built from its public constructor when it is not registered).</typeparam>
    /// <typeparam name="TPayload">The payload, stored as JSON (System.Text.Json, web defaults).</typeparam>
    /// <param name="builder">The WorkQueue builder.</param>
    /// <param name="name">The queue's name (case-insensitive); it is part of the Redis keys.</param>
    /// <param name="configure">Configures the engine's settings (threads, concurrency, retries, capacity).</param>
    /// <param name="configureDurable">Configures the durable settings (prefetch, claims, poison limit, keys).</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or white space, or contains braces.</exception>
    [RequiresUnreferencedCode(ReflectionJsonMessage)]
    [RequiresDynamicCode(ReflectionJsonMessage)]
    [SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = OverloadJustification)]
    public static IWorkQueueBuilder AddDurableQueue<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        this IWorkQueueBuilder builder,
        string name,
        Action<WorkQueueOptions>? configure = null,
        Action<DurableQueueOptions>? configureDurable = null)
        where THandler : class, IJobHandler<TPayload> =>
        AddTyped<THandler, TPayload>(builder, name, configure, configureDurable, ReflectionTypeInfo<TPayload>());

    /// <summary>
    /// Adds a durable queue of <typeparamref name="TPayload"/> jobs run by <typeparamref name="THandler"/>, whose payloads
    /// are written and read with <paramref name="payloadTypeInfo"/>: no reflection, so it suits trimmed and native AOT apps.
    /// Otherwise as <see cref="AddDurableQueue{THandler, TPayload}(IWorkQueueBuilder, string, Action{WorkQueueOptions}?, Action{DurableQueueOptions}?)"/>.
    /// </summary>
    /// <remarks>
    /// Pass a source-generated context's metadata, such as <c>AppJsonContext.Default.Payment</c> for
    /// <c>[JsonSerializable(typeof(Payment))] partial class AppJsonContext : JsonSerializerContext</c>; its options
    /// (<c>[JsonSourceGenerationOptions]</c>) are the payload's JSON options. Jobs run at least once: handlers must be
    /// idempotent.
    /// </remarks>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each job (or built from its public constructor when it is not registered).</typeparam>
    /// <typeparam name="TPayload">The payload, stored as JSON.</typeparam>
    /// <param name="builder">The WorkQueue builder.</param>
    /// <param name="name">The queue's name (case-insensitive); it is part of the Redis keys.</param>
    /// <param name="payloadTypeInfo">The payload's JSON metadata, from a source-generated <c>JsonSerializerContext</c>.</param>
    /// <param name="configure">Configures the engine's settings (threads, concurrency, retries, capacity).</param>
    /// <param name="configureDurable">Configures the durable settings (prefetch, claims, poison limit, keys).</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> or <paramref name="payloadTypeInfo"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or white space, or contains braces.</exception>
    [SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = OverloadJustification)]
    public static IWorkQueueBuilder AddDurableQueue<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        this IWorkQueueBuilder builder,
        string name,
        JsonTypeInfo<TPayload> payloadTypeInfo,
        Action<WorkQueueOptions>? configure = null,
        Action<DurableQueueOptions>? configureDurable = null)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(payloadTypeInfo);
        return AddTyped<THandler, TPayload>(builder, name, configure, configureDurable, payloadTypeInfo);
    }

    /// <summary>
    /// Adds a durable queue that carries jobs of any registered job type (see
    /// <see cref="AddJobType{THandler, TPayload}(IWorkQueueBuilder, JsonTypeInfo{TPayload}, string?)"/>): jobs are stored
    /// in a Redis stream, every instance that declares the queue consumes it (one consumer group), and a job whose
    /// instance crashes is reclaimed and run by another. One queue costs one stream, consumer group, Redis thread and
    /// worker pool, whatever the number of job types it carries.
    /// </summary>
    /// <remarks>
    /// Each stored job names its job type; an instance runs a job with the handler registered under that name. Jobs run
    /// at least once: handlers must be idempotent. Otherwise as
    /// <see cref="AddDurableQueue{THandler, TPayload}(IWorkQueueBuilder, string, Action{WorkQueueOptions}?, Action{DurableQueueOptions}?)"/>.
    /// </remarks>
    /// <param name="builder">The WorkQueue builder.</param>
    /// <param name="name">The queue's name (case-insensitive); it is part of the Redis keys.</param>
    /// <param name="configure">Configures the engine's settings (threads, concurrency, retries, capacity).</param>
    /// <param name="configureDurable">Configures the durable settings (prefetch, claims, poison limit, keys).</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or white space, or contains braces.</exception>
    [SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = "The generic overloads take type arguments; a call names them or not.")]
    public static IWorkQueueBuilder AddDurableQueue(
        this IWorkQueueBuilder builder,
        string name,
        Action<WorkQueueOptions>? configure = null,
        Action<DurableQueueOptions>? configureDurable = null)
    {
        Add(builder, name, configure, configureDurable, defaultType: null);
        return builder;
    }

    /// <summary>
    /// Registers a job type that durable queues can carry: <typeparamref name="THandler"/> runs its jobs, whose
    /// <typeparamref name="TPayload"/> payloads are written and read with <paramref name="payloadTypeInfo"/> (no
    /// reflection: it suits trimmed and native AOT apps). Every stored job names its job type, so register the same
    /// types, under the same names, on every instance that consumes the queues.
    /// </summary>
    /// <remarks>
    /// The name is what Redis keeps with each job: a rename of the handler's class does not change it when the name is
    /// given. It defaults to the handler's class name (<c>typeof(THandler).Name</c>); a generic handler needs one given.
    /// Registering the same handler and payload again under the same name does nothing.
    /// </remarks>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each job (or built from its public constructor when it is not registered).</typeparam>
    /// <typeparam name="TPayload">The payload, stored as JSON.</typeparam>
    /// <param name="builder">The WorkQueue builder.</param>
    /// <param name="payloadTypeInfo">The payload's JSON metadata, from a source-generated <c>JsonSerializerContext</c>.</param>
    /// <param name="name">The job type's name: 1 to 100 ASCII letters, digits, <c>.</c>, <c>_</c>, <c>-</c> or <c>:</c>; <see langword="null"/> for the handler's class name.</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> or <paramref name="payloadTypeInfo"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="name"/> is not a valid name, is taken by another handler, or the handler is registered under
    /// another name; or <paramref name="name"/> is <see langword="null"/> and the handler is generic.
    /// </exception>
    [SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = OverloadJustification)]
    public static IWorkQueueBuilder AddJobType<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        this IWorkQueueBuilder builder,
        JsonTypeInfo<TPayload> payloadTypeInfo,
        string? name = null)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(payloadTypeInfo);
        RegisterType<THandler, TPayload>(builder.Services, payloadTypeInfo, name);
        return builder;
    }

    /// <summary>
    /// Registers a job type that durable queues can carry, its payloads written and read with System.Text.Json's web
    /// defaults (<see cref="JsonSerializerOptions.Web"/>), read from <typeparamref name="TPayload"/> by reflection;
    /// otherwise as <see cref="AddJobType{THandler, TPayload}(IWorkQueueBuilder, JsonTypeInfo{TPayload}, string?)"/>.
    /// </summary>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each job (or built from its public constructor when it is not registered).</typeparam>
    /// <typeparam name="TPayload">The payload, stored as JSON (System.Text.Json, web defaults).</typeparam>
    /// <param name="builder">The WorkQueue builder.</param>
    /// <param name="name">The job type's name; <see langword="null"/> for the handler's class name.</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="builder"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">As <see cref="AddJobType{THandler, TPayload}(IWorkQueueBuilder, JsonTypeInfo{TPayload}, string?)"/>.</exception>
    [RequiresUnreferencedCode(ReflectionJsonMessage)]
    [RequiresDynamicCode(ReflectionJsonMessage)]
    [SuppressMessage("ApiDesign", "RS0026:Do not add multiple public overloads with optional parameters", Justification = OverloadJustification)]
    public static IWorkQueueBuilder AddJobType<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        this IWorkQueueBuilder builder,
        string? name = null)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(builder);
        RegisterType<THandler, TPayload>(builder.Services, ReflectionTypeInfo<TPayload>(), name);
        return builder;
    }

    private const string ReflectionJsonMessage =
        "The payload's JSON contract is read from TPayload by reflection (System.Text.Json's web defaults). " +
        "Use the overload that takes a JsonTypeInfo<TPayload> from a source-generated JsonSerializerContext.";

    // As System.Text.Json's Serialize(value, options = null) and Serialize(value, JsonTypeInfo): the overloads differ in a
    // required parameter, so only a call whose third argument is a bare null is ambiguous, and the compiler says so.
    private const string OverloadJustification = "The overloads differ in the required JsonTypeInfo<TPayload>; a bare null third argument is the only ambiguous call and fails to compile.";

    private static IWorkQueueBuilder AddTyped<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        IWorkQueueBuilder builder,
        string name,
        Action<WorkQueueOptions>? configure,
        Action<DurableQueueOptions>? configureDurable,
        JsonTypeInfo<TPayload> payloadTypeInfo)
        where THandler : class, IJobHandler<TPayload>
    {
        ArgumentNullException.ThrowIfNull(builder);
        var type = RegisterType<THandler, TPayload>(builder.Services, payloadTypeInfo, name: null);
        Add(builder, name, configure, configureDurable, type);
        return builder;
    }

    /// <summary>Registers a job type in the service collection's one registry (made with the first), now: a conflict fails the call that makes it.</summary>
    private static DurableJobType<THandler, TPayload> RegisterType<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload>(
        IServiceCollection services, JsonTypeInfo<TPayload> payloadTypeInfo, string? name)
        where THandler : class, IJobHandler<TPayload>
    {
        if (name is null)
        {
            if (typeof(THandler).IsGenericType)
            {
                throw new ArgumentException($"Handler {typeof(THandler).FullName} is generic: give its job type a name (AddJobType's name), as its class name is not one.", nameof(name));
            }

            name = typeof(THandler).Name;
        }

        JobTypeNames.Validate(name, nameof(name));
        return (DurableJobType<THandler, TPayload>)JobTypes(services).Add(new DurableJobType<THandler, TPayload>(name, payloadTypeInfo), nameof(name));
    }

    private static DurableJobTypeRegistry JobTypes(IServiceCollection services)
    {
        foreach (var descriptor in services)
        {
            if (descriptor.ServiceType == typeof(DurableJobTypeRegistry) && descriptor.ImplementationInstance is DurableJobTypeRegistry registered)
            {
                return registered;
            }
        }

        var registry = new DurableJobTypeRegistry();
        services.AddSingleton(registry);
        return registry;
    }

    private static IServiceCollection Add(
        IWorkQueueBuilder builder,
        string name,
        Action<WorkQueueOptions>? configure,
        Action<DurableQueueOptions>? configureDurable,
        DurableJobType? defaultType)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        if (name.AsSpan().IndexOfAny('{', '}') >= 0)
        {
            throw new ArgumentException($"A durable queue's name is part of its Redis keys' hash tag and cannot contain braces: '{name}'.", nameof(name));
        }

        builder.AddQueue(name, configure);
        var services = builder.Services;
        string optionsName = WorkQueueRegistry.OptionsName(name);
        services.AddOptions<WorkQueueOptions>(optionsName).Validate(
            static o => o.FullMode != QueueFullMode.DropOldest,
            $"Durable queue '{name}': FullMode DropOldest is not supported (a durable queue never drops an accepted job); use Wait or Reject.");
        var durable = services.AddOptions<DurableQueueOptions>(optionsName).ValidateOnStart();
        if (configureDurable is not null)
        {
            durable.Configure(configureDurable);
        }

        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<DurableQueueOptions>, DurableQueueOptionsValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<DurableQueueOptions>, DurableQueueOptionsRulesValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<DurableQueueOptions>, DurableQueueTimeoutsValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<DurableQueueOptions>, DurableQueueConfiguration>());
        services.TryAddSingleton<DurableQueueRegistry>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IRedisWarmupCheck, DurableServerChecks>());
        services.TryAddSingleton<DurableQueueMetrics>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<RedisWarmupOptions>, DurableGroupsWarmup>());
        var types = JobTypes(services);
        services.Configure<WorkQueueRegistry>(r => r.Stores[name] = (sp, queue) => CreateStore(sp, queue, new QueueJobTypes(types, defaultType)));
        services.AddHealthChecks().AddTypeActivatedCheck<DurableQueueHealthCheck>($"workqueue-durable-{optionsName}", failureStatus: null, tags: [WorkQueueHealthCheckTags.Ready], args: name);
        return services;
    }

    private static RedisStreamStore CreateStore(IServiceProvider services, string name, QueueJobTypes types)
    {
        string optionsName = WorkQueueRegistry.OptionsName(name);
        var options = services.GetRequiredService<IOptionsMonitor<WorkQueueOptions>>().Get(optionsName);
        var durable = services.GetRequiredService<IOptionsMonitor<DurableQueueOptions>>().Get(optionsName);
        var logger = services.GetService<ILoggerFactory>()?.CreateLogger("WorkQueue") ?? NullLogger.Instance;

        // The connection is asked for when the store first uses it, not now: resolving it connects, and the store is
        // created when IWorkQueueProvider is first resolved, before the Redis warm-up has run.
        var store = new RedisStreamStore(
            name,
            options,
            durable,
            types,
            () => services.GetService<IConnectionMultiplexer>(),
            services.GetService<WorkQueueMetrics>(),
            services.GetRequiredService<WorkQueueEnvironment>().Time,
            logger);
        services.GetRequiredService<DurableQueueRegistry>().Add(new DurableQueue(store, store.Queue, store.Jobs));

        // Its gauges read every durable queue in the registry; created once, with the first store.
        _ = services.GetRequiredService<DurableQueueMetrics>();
        return store;
    }

    /// <summary>The payload's metadata with the web defaults, read from <typeparamref name="TPayload"/> by reflection.</summary>
    [RequiresUnreferencedCode(ReflectionJsonMessage)]
    [RequiresDynamicCode(ReflectionJsonMessage)]
    private static JsonTypeInfo<TPayload> ReflectionTypeInfo<TPayload>() =>
        (JsonTypeInfo<TPayload>)JsonSerializerOptions.Web.GetTypeInfo(typeof(TPayload));
}
