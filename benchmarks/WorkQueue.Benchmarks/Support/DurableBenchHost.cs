using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// A generic host (no web server) as an app would build it, with one queue named <see cref="QueueName"/> whose jobs run
/// <see cref="SignalingOrderHandler"/>: either a durable queue on a redis-server (through <c>AddRedisWarmup</c>, whose
/// shared connection has dedicated I/O threads) or the in-memory queue, with the same worker count, autoscaling off.
/// </summary>
public sealed class DurableBenchHost : IDisposable
{
    /// <summary>The queue's name.</summary>
    public const string QueueName = "bench";

    /// <summary>The prefetch of the durable queue: as many jobs as one batched script call carries.</summary>
    public const int Prefetch = 256;

    /// <summary>The capacity of either queue: far above what the benchmarks keep in flight, so no enqueue waits for room.</summary>
    public const int Capacity = 1_000_000;

    private readonly IHost _host;
    private readonly Producer _producer;
    private readonly bool _durable;

    private DurableBenchHost(IHost host, Producer producer, bool durable)
    {
        _host = host;
        _producer = producer;
        _durable = durable;
        Signals = host.Services.GetRequiredService<OrderSignals>();
        Control = host.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == QueueName);
    }

    /// <summary>Gets the signals the jobs set.</summary>
    public OrderSignals Signals { get; }

    /// <summary>Gets the queue's control side.</summary>
    public IWorkQueueControl Control { get; }

    /// <summary>Starts a host with a durable queue on <paramref name="redis"/>.</summary>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count.</param>
    /// <returns>The started host, its workers running.</returns>
    public static DurableBenchHost StartDurable(RedisServerProcess redis, int workers) => Start<SignalingOrderHandler>(workers, redis, services: null);

    /// <summary>
    /// Starts a host with a durable queue on <paramref name="redis"/> whose queue options are then changed by
    /// <paramref name="configure"/> (after the fixed worker count and capacity).
    /// </summary>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count.</param>
    /// <param name="configure">Changes the queue's options.</param>
    /// <returns>The started host, its workers running.</returns>
    public static DurableBenchHost StartDurable(RedisServerProcess redis, int workers, Action<WorkQueueOptions> configure) =>
        Start<SignalingOrderHandler>(workers, redis, services: null, configure);

    /// <summary>
    /// Starts a host with a durable queue on <paramref name="redis"/> whose queue options and durable options are then
    /// changed by <paramref name="configure"/> and <paramref name="configureDurable"/> (after the fixed settings).
    /// </summary>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count.</param>
    /// <param name="configure">Changes the queue's options, if given.</param>
    /// <param name="configureDurable">Changes the durable options (replica acknowledgements, say).</param>
    /// <returns>The started host, its workers running.</returns>
    public static DurableBenchHost StartDurable(RedisServerProcess redis, int workers, Action<WorkQueueOptions>? configure, Action<DurableQueueOptions> configureDurable) =>
        Start<SignalingOrderHandler>(workers, redis, services: null, configure, configureDurable);

    /// <summary>
    /// Starts a host with a durable queue on <paramref name="redis"/> whose jobs run <typeparamref name="THandler"/>
    /// (resolved from a new scope per job) instead of <see cref="SignalingOrderHandler"/>.
    /// </summary>
    /// <typeparam name="THandler">The queue's handler.</typeparam>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count.</param>
    /// <param name="services">Registers what the handler needs.</param>
    /// <returns>The started host, its workers running.</returns>
    public static DurableBenchHost StartDurable<THandler>(RedisServerProcess redis, int workers, Action<IServiceCollection> services)
        where THandler : class, IJobHandler<Order> => Start<THandler>(workers, redis, services);

    /// <summary>Starts a host with an in-memory queue.</summary>
    /// <param name="workers">The fixed worker count.</param>
    /// <returns>The started host, its workers running.</returns>
    public static DurableBenchHost StartInMemory(int workers) => Start<SignalingOrderHandler>(workers, redis: null, services: null);

    /// <summary>Starts a host with only the shared Redis connection (warmed up) and no queue: a control.</summary>
    /// <param name="redis">The redis-server.</param>
    /// <returns>The started host.</returns>
    public static IHost StartConnectionOnly(RedisServerProcess redis)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddRedisWarmup(o => o.Configuration = redis.Configuration);
        var host = builder.Build();
        host.Start();
        return host;
    }

    /// <summary>Enqueues one job: on the durable queue, completes once Redis has it; on the in-memory queue, once it is queued.</summary>
    /// <param name="order">The payload.</param>
    /// <returns>The enqueue.</returns>
    public ValueTask EnqueueAsync(Order order) => _producer.EnqueueAsync(order);

    /// <summary>
    /// Enqueues one job with options on the durable queue (an idempotency key, say); completes once Redis has it, and
    /// fails if Redis answered that another job holds its key, so a refused enqueue cannot pass for a stored one.
    /// </summary>
    /// <param name="order">The payload.</param>
    /// <param name="options">The job's options.</param>
    /// <returns>The enqueue.</returns>
    public async ValueTask EnqueueAsync(Order order, JobOptions options)
    {
        var result = await (_durable ? _producer : throw new InvalidOperationException("Options need the durable queue here.")).EnqueueAsync(order, options).ConfigureAwait(false);
        if (!result.Created)
        {
            throw new InvalidOperationException($"The enqueue with key '{options.IdempotencyKey}' was refused: job {result.JobId} holds it.");
        }
    }

    /// <summary>Schedules one job on the durable queue, due <paramref name="delay"/> from now on Redis's clock.</summary>
    /// <param name="order">The payload.</param>
    /// <param name="delay">How long from now.</param>
    /// <returns>The job's id; completes once Redis has the job.</returns>
    public ValueTask<string> ScheduleAsync(Order order, TimeSpan delay) =>
        (_durable ? _producer : throw new InvalidOperationException("Scheduling needs the durable queue.")).ScheduleAsync(order, delay);

    /// <summary>Stops the host (10 s drain) and disposes it.</summary>
    public void Dispose()
    {
        _host.StopAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        _host.Dispose();
    }

    private static DurableBenchHost Start<THandler>(int workers, RedisServerProcess? redis, Action<IServiceCollection>? services, Action<WorkQueueOptions>? configure = null, Action<DurableQueueOptions>? configureDurable = null)
        where THandler : class, IJobHandler<Order>
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<OrderSignals>();
        services?.Invoke(builder.Services);
        void Configure(WorkQueueOptions o)
        {
            o.MinWorkers = workers;
            o.MaxWorkers = workers;
            o.AutoScale.Enabled = false;
            o.Capacity = Capacity;
            configure?.Invoke(o);
        }

        if (redis is null)
        {
            builder.Services.AddWorkQueue().AddQueue(QueueName, Configure);
        }
        else
        {
            builder.Services.AddRedisWarmup(o => o.Configuration = redis.Configuration);
            builder.Services.AddWorkQueue().AddDurableQueue<THandler, Order>(QueueName, Configure, d =>
            {
                d.Prefetch = Prefetch;
                configureDurable?.Invoke(d);
            });
        }

        var host = builder.Build();
        host.Start();
        var started = new DurableBenchHost(host, new Producer<THandler>(host.Services.GetRequiredKeyedService<IWorkQueue>(QueueName)), redis is not null);
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (started.Control.GetSnapshot().Workers != workers)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"The queue has {started.Control.GetSnapshot().Workers} workers, expected {workers}.");
            }

            Thread.Sleep(1);
        }

        return started;
    }

    /// <summary>The queue's <see cref="IWorkQueue"/> with the host's handler as the type argument of every call.</summary>
    private abstract class Producer
    {
        public abstract ValueTask EnqueueAsync(Order order);

        public abstract ValueTask<EnqueueResult> EnqueueAsync(Order order, JobOptions options);

        public abstract ValueTask<string> ScheduleAsync(Order order, TimeSpan delay);
    }

    private sealed class Producer<THandler>(IWorkQueue queue) : Producer
        where THandler : class, IJobHandler<Order>
    {
        public override ValueTask EnqueueAsync(Order order) => queue.EnqueueAsync<THandler, Order>(order);

        public override ValueTask<EnqueueResult> EnqueueAsync(Order order, JobOptions options) => queue.EnqueueAsync<THandler, Order>(order, options);

        public override ValueTask<string> ScheduleAsync(Order order, TimeSpan delay) => queue.ScheduleAsync<THandler, Order>(order, delay);
    }
}
