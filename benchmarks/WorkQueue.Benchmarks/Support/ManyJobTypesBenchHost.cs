using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// D2's hosts for issue 29's "cost stays flat as job types grow": thirty job types on one durable queue (or one, declared
/// the same way, to compare with), or thirty durable queues of one type each (what a service needed before a queue could
/// carry several types). Every job type runs <see cref="SignalingOrderHandler"/>'s work through its own handler class,
/// so each is a distinct registration.
/// </summary>
public sealed class ManyJobTypesBenchHost : IDisposable
{
    /// <summary>The number of job types, or of queues.</summary>
    public const int Count = 30;

    private readonly IHost _host;
    private readonly IReadOnlyList<JobType> _types;

    private ManyJobTypesBenchHost(IHost host, IReadOnlyList<string> queues, IReadOnlyList<JobType> types)
    {
        _host = host;
        _types = types;
        Signals = host.Services.GetRequiredService<OrderSignals>();
        Queues = queues;
    }

    /// <summary>Gets the signals the jobs set.</summary>
    public OrderSignals Signals { get; }

    /// <summary>Gets the names of the host's queues.</summary>
    public IReadOnlyList<string> Queues { get; }

    /// <summary>
    /// Starts a host with one durable queue carrying <paramref name="types"/> job types (<see cref="Count"/> unless
    /// given), each added with <c>AddJobType</c> to a queue declared without one, <paramref name="workers"/> fixed workers.
    /// </summary>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count.</param>
    /// <param name="types">The number of job types, 1 to <see cref="Count"/>.</param>
    /// <returns>The started host, its workers running.</returns>
    public static ManyJobTypesBenchHost StartOneQueue(RedisServerProcess redis, int workers, int types = Count) =>
        Start(redis, workers, FirstTypes(types), (builder, declared) =>
        {
            builder.AddDurableQueue(DurableBenchHost.QueueName, o => Fixed(o, workers), d => d.Prefetch = DurableBenchHost.Prefetch);
            foreach (var type in declared)
            {
                type.Register(builder);
            }

            return [DurableBenchHost.QueueName];
        });

    /// <summary>Starts a host with <see cref="Count"/> durable queues of one job type each, <paramref name="workers"/> fixed workers each.</summary>
    /// <param name="redis">The redis-server.</param>
    /// <param name="workers">The fixed worker count of each queue.</param>
    /// <returns>The started host, every queue's workers running.</returns>
    public static ManyJobTypesBenchHost StartQueuePerType(RedisServerProcess redis, int workers) =>
        Start(redis, workers, JobType.All, (builder, declared) =>
        {
            var names = new List<string>();
            foreach (var type in declared)
            {
                string name = $"{DurableBenchHost.QueueName}-{type.Name}";
                builder.AddDurableQueue(name, o => Fixed(o, workers), d => d.Prefetch = DurableBenchHost.Prefetch);
                type.Register(builder);
                names.Add(name);
            }

            return names;
        });

    /// <summary>
    /// Runs one job of each job type (one queue), or one job on each queue (a queue per type), waiting for each to
    /// start: a consumer that stopped cannot pass for a cheap one.
    /// </summary>
    /// <param name="timeout">How long each job may take to start.</param>
    public void Probe(TimeSpan timeout)
    {
        for (int i = 0; i < _types.Count; i++)
        {
            string queue = Queues.Count == 1 ? Queues[0] : Queues[i];
            Signals.Started.Reset();
            _types[i].EnqueueAsync(_host.Services.GetRequiredKeyedService<IWorkQueue>(queue)).AsTask().Wait(timeout);
            Signals.Started.SpinUntilSet(timeout, $"job type {_types[i].Name} on queue {queue}");
        }
    }

    /// <summary>Gets the idle workers of the durable queues together (not the default queue every host has).</summary>
    /// <returns>The sum of the durable queues' worker counts.</returns>
    public int Workers() => _host.Services.GetRequiredService<IWorkQueueProvider>().Queues
        .Where(q => Queues.Contains(q.Name, StringComparer.OrdinalIgnoreCase))
        .Sum(q => q.GetSnapshot().Workers);

    /// <summary>Stops the host (10 s drain) and disposes it.</summary>
    public void Dispose()
    {
        _host.StopAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
        _host.Dispose();
    }

    private static void Fixed(WorkQueueOptions o, int workers)
    {
        o.MinWorkers = workers;
        o.MaxWorkers = workers;
        o.AutoScale.Enabled = false;
        o.Capacity = DurableBenchHost.Capacity;
    }

    private static IReadOnlyList<JobType> FirstTypes(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1, nameof(count));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, Count, nameof(count));
        return JobType.All.Take(count).ToList();
    }

    private static ManyJobTypesBenchHost Start(RedisServerProcess redis, int workers, IReadOnlyList<JobType> types, Func<IWorkQueueBuilder, IReadOnlyList<JobType>, IReadOnlyList<string>> declare)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<OrderSignals>();
        builder.Services.AddRedisWarmup(o => o.Configuration = redis.Configuration);
        var queues = declare(builder.Services.AddWorkQueue(), types);
        var host = builder.Build();
        host.Start();
        var started = new ManyJobTypesBenchHost(host, queues, types);
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (started.Workers() != workers * queues.Count)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"The queues have {started.Workers()} workers, expected {workers * queues.Count}.");
            }

            Thread.Sleep(1);
        }

        return started;
    }

    /// <summary>The thirty job types: one generic handler closed over thirty marker types, each with its own name.</summary>
    private abstract class JobType
    {
        public static readonly IReadOnlyList<JobType> All =
        [
            new Of<T01>(), new Of<T02>(), new Of<T03>(), new Of<T04>(), new Of<T05>(), new Of<T06>(), new Of<T07>(), new Of<T08>(),
            new Of<T09>(), new Of<T10>(), new Of<T11>(), new Of<T12>(), new Of<T13>(), new Of<T14>(), new Of<T15>(), new Of<T16>(),
            new Of<T17>(), new Of<T18>(), new Of<T19>(), new Of<T20>(), new Of<T21>(), new Of<T22>(), new Of<T23>(), new Of<T24>(),
            new Of<T25>(), new Of<T26>(), new Of<T27>(), new Of<T28>(), new Of<T29>(), new Of<T30>(),
        ];

        public abstract string Name { get; }

        public abstract void Register(IWorkQueueBuilder builder);

        public abstract ValueTask EnqueueAsync(IWorkQueue queue);

        private sealed class Of<TMarker> : JobType
        {
            public override string Name => typeof(TMarker).Name.ToLowerInvariant();

            public override void Register(IWorkQueueBuilder builder) => builder.AddJobType<TypedOrderHandler<TMarker>, Order>(Name);

            // Without options, as DurableBenchHost's probe: the rows' probes differ only in their number of jobs.
            public override ValueTask EnqueueAsync(IWorkQueue queue) =>
                queue.EnqueueAsync<TypedOrderHandler<TMarker>, Order>(new Order(42));
        }
    }

    /// <summary>A job type's handler: <see cref="SignalingOrderHandler"/>'s work under a class of its own.</summary>
    /// <typeparam name="TMarker">The marker that makes the class distinct.</typeparam>
    /// <param name="signals">The shared signals.</param>
    private sealed class TypedOrderHandler<TMarker>(OrderSignals signals) : IJobHandler<Order>
    {
        public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken)
        {
            signals.Started.Set();
            return default;
        }
    }

#pragma warning disable SA1201, SA1402, SA1649 // thirty empty marker types, kept together at the end
    private sealed class T01; private sealed class T02; private sealed class T03; private sealed class T04; private sealed class T05;
    private sealed class T06; private sealed class T07; private sealed class T08; private sealed class T09; private sealed class T10;
    private sealed class T11; private sealed class T12; private sealed class T13; private sealed class T14; private sealed class T15;
    private sealed class T16; private sealed class T17; private sealed class T18; private sealed class T19; private sealed class T20;
    private sealed class T21; private sealed class T22; private sealed class T23; private sealed class T24; private sealed class T25;
    private sealed class T26; private sealed class T27; private sealed class T28; private sealed class T29; private sealed class T30;
#pragma warning restore SA1201, SA1402, SA1649
}
