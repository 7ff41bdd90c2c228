using System.Diagnostics;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// <c>controller</c>: starts its own redis-server and the worker processes, enqueues the numbered jobs, SIGKILLs a random
/// worker every kill interval and starts a replacement, optionally SIGKILLs and restarts Redis once mid-load (or, with
/// <c>--sentinel</c>, SIGKILLs the primary of a primary, a replica and three Sentinels for good; with <c>--cluster</c>,
/// moves the queue's slot to another master of a three-master cluster), and, once
/// enough kills happened and every acknowledged job completed, stops the workers gracefully and reports what it counted.
/// </summary>
/// <remarks>
/// This file holds the run's sequence; <c>.Producing.cs</c> the producers (and the Redis restart, which they trigger);
/// <c>.Killing.cs</c> the kills and the reclaim delays; <c>.Reporting.cs</c> the final count.
/// </remarks>
internal sealed partial class ChaosController : IAsyncDisposable
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(50);
    private static readonly TimeSpan ProgressInterval = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan WorkerReadyTimeout = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan WorkerStopTimeout = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan ReclaimWaitAfterLoad = TimeSpan.FromSeconds(60);
    private static readonly TimeSpan BurstKillOffset = TimeSpan.FromMilliseconds(100);

    private readonly ControllerSettings _settings;
    private readonly ChaosKeys _keys;
    private readonly DirectoryInfo _directory;
    private readonly ChaosRedisServer _redis;
    private readonly WorkerLog _workerLog;
    private readonly Stopwatch _clock = new();
    private readonly List<WorkerProcess> _workers = [];
    private readonly List<WorkerProcess> _retired = [];
    private ConnectionMultiplexer? _monitor;
    private ChaosSentinel? _sentinel;
    private ChaosCluster? _cluster;
    private int _nextWorkerNumber;
    private int _workerCrashes;

    public ChaosController(ControllerSettings settings)
    {
        _settings = settings;
        _keys = new ChaosKeys(settings.Prefix);
        _directory = Directory.CreateTempSubdirectory("workqueue-chaos-");
        _redis = new ChaosRedisServer(settings.RedisPort ?? ChaosRedisServer.FreePort(), _directory.FullName, settings.RestartRedis ? "always" : "everysec");
        _workerLog = new WorkerLog(Path.Combine(_directory.FullName, "workers.log"));
        _acknowledged = new bool[settings.Jobs + 1];
    }

    private TimeSpan Elapsed => _clock.Elapsed;

    private IDatabase Monitor => _monitor!.GetDatabase();

    /// <summary>Gets what the workers, the producers and the monitor connect with: the server, the Sentinels or the cluster's masters.</summary>
    private string RedisConfiguration => _sentinel?.Configuration ?? _cluster?.Configuration ?? _redis.Configuration;

    /// <returns>0 when nothing was lost and the run did what it was asked; 1 when acknowledged jobs were lost; 2 when the run itself fell short.</returns>
    public async Task<int> RunAsync()
    {
        _clock.Start();
        if (_settings.Sentinel)
        {
            _sentinel = await ChaosSentinel.StartAsync(_directory.FullName);
            Say($"primary redis-server on 127.0.0.1:{_sentinel.Primary.Port}, replicas on {string.Join(", ", _sentinel.Replicas.Select(r => r.Configuration))} (appendfsync everysec), Sentinels {_sentinel.Configuration}, replica acknowledgements {_settings.ReplicaAcks}, run directory {_directory.FullName}");
        }
        else if (_settings.Cluster)
        {
            _cluster = await ChaosCluster.StartAsync(_directory.FullName);
            Say($"redis cluster: masters {_cluster.Configuration}, replicas {string.Join(", ", _cluster.Replicas.Select(r => r.Configuration))} (appendfsync everysec), run directory {_directory.FullName}");
        }
        else
        {
            await _redis.StartAsync();
            Say($"redis-server on {_redis.Configuration} (appendfsync {(_settings.RestartRedis ? "always" : "everysec")}), run directory {_directory.FullName}");
        }

        var monitor = ConfigurationOptions.Parse(RedisConfiguration);
        monitor.AbortOnConnectFail = false;
        monitor.SyncTimeout = 5_000;
        monitor.AsyncTimeout = 5_000;

        // While Redis restarts, a look fails at once rather than holding up the kills until it is back.
        monitor.BacklogPolicy = BacklogPolicy.FailFast;
        _monitor = await ConnectionMultiplexer.ConnectAsync(monitor);

        for (int i = 0; i < _settings.Workers; i++)
        {
            StartWorker();
        }

        await Task.WhenAll(_workers.Select(w => w.Ready)).WaitAsync(WorkerReadyTimeout);
        Say($"{_settings.Workers} workers ready (pids {string.Join(", ", _workers.Select(w => w.Pid))})");

        using var timeout = new CancellationTokenSource(_settings.Timeout);
        var producing = ProduceAsync(timeout.Token);
        var restarting = _settings.RestartRedis ? RestartRedisMidLoadAsync(timeout.Token)
            : _settings.Sentinel ? FailOverMidLoadAsync(timeout.Token)
            : _settings.Cluster ? MoveSlotMidLoadAsync(timeout.Token)
            : Task.CompletedTask;
        bool finished = await ChaosLoopAsync(producing, timeout.Token);
        await WaitForReclaimsAsync();
        await ObserveAsync(producing, "the producers");
        await ObserveAsync(restarting, "the Redis restart");

        // A replacement still starting would die of SIGTERM before its host handles it: let it start first.
        await ObserveAsync(Task.WhenAll(_workers.Select(w => w.Ready)), "the last replacement workers' start");
        Say($"stopping {_workers.Count} workers with SIGTERM");
        bool[] stopped = await Task.WhenAll(_workers.Select(w => w.TerminateAsync(WorkerStopTimeout)));
        int notStopped = stopped.Count(s => !s);
        int badExits = _workers.Count(w => w.HasExited && w.ExitCode != 0);
        return await ReportAsync(timedOut: !finished, notStopped, badExits);
    }

    /// <summary>
    /// Kills a worker every kill interval, replaces crashed ones, tracks reclaims and watches completions, until enough
    /// kills happened and every acknowledged job completed. Returns <see langword="false"/> when the run timed out first.
    /// </summary>
    private async Task<bool> ChaosLoopAsync(Task producing, CancellationToken timeout)
    {
        TimeSpan? nextKill = null;
        var nextCompletionCheck = TimeSpan.Zero;
        var nextProgress = ProgressInterval;
        long completed = 0;
        while (!timeout.IsCancellationRequested)
        {
            ReplaceCrashedWorkers();
            await TrackReclaimsAsync();
            bool allCompleted = producing.IsCompleted && completed >= _acknowledgedCount;
            if (Elapsed >= nextCompletionCheck)
            {
                nextCompletionCheck = Elapsed + TimeSpan.FromMilliseconds(250);
                completed = await CountCompletedAsync() ?? completed;
                allCompleted = producing.IsCompleted && completed >= _acknowledgedCount;
                if (producing.IsCompleted && !allCompleted && await UnfinishedInRedisAsync() == 0)
                {
                    // Nothing is left to run anywhere, so nothing more can complete: what has not completed is lost.
                    completed = await CountCompletedAsync() ?? completed;
                    if (completed < _acknowledgedCount)
                    {
                        Say($"the queue is empty (no entry in the stream, no retry waiting) with {completed} of {_acknowledgedCount} acknowledged jobs completed");
                        return true;
                    }
                }
            }

            // Every job completed is not yet the end: an enqueue retried after its reply was lost (Redis killed) left
            // a second entry, and a worker stopped with SIGTERM hands back the entries it had not started. The run ends
            // once those ran too and the stream is trimmed, so that what the report finds left in Redis is left behind.
            if (allCompleted && _kills >= _settings.MinKills && await UnfinishedInRedisAsync() == 0)
            {
                Say($"all {_acknowledgedCount} acknowledged jobs completed and the queue is empty, {_kills} kills");
                return true;
            }

            // Kills keep to a schedule from the start of the load: one per interval, or in burst mode one shortly into
            // each burst (the workers have fetched it and hold a backlog).
            if (nextKill is null && _loadStartedAt is { } loadStarted)
            {
                nextKill = loadStarted + (_settings.Bursts ? Min(BurstKillOffset, _settings.KillInterval / 2) : _settings.KillInterval);
            }

            // Once the load is over and the kills asked for are done, the workers are left to drain the queue: on a
            // machine too busy to start a replacement within the kill interval, more kills would only hit workers that
            // just took over the same entries, until the entries' delivery limit dead-letters them as poison.
            bool killsDone = producing.IsCompleted && _kills >= _settings.MinKills;
            if (!killsDone && Elapsed >= nextKill)
            {
                bool onlyBusy = !producing.IsCompleted && Elapsed < nextKill + (_settings.KillInterval / 2);
                if (await TryKillRandomWorkerAsync(onlyBusy))
                {
                    nextKill += _settings.KillInterval;
                }
                else if (!onlyBusy)
                {
                    Say("no worker is ready to be killed: this kill is skipped");
                    nextKill += _settings.KillInterval;
                }
            }

            if (Elapsed >= nextProgress)
            {
                nextProgress = Elapsed + ProgressInterval;
                Say($"acknowledged {_acknowledgedCount}/{_settings.Jobs}, completed {completed}, kills {_kills}, reclaims in progress {_reclaims.Count}, redis restarts {_redisRestarts}, workers ready {_workers.Count(w => w.Ready.IsCompletedSuccessfully && !w.HasExited)}/{_workers.Count}");
            }

            await Task.Delay(Tick, CancellationToken.None);
        }

        Say($"timed out after {_settings.Timeout.TotalSeconds:F0} s: acknowledged {_acknowledgedCount}/{_settings.Jobs}, completed {completed}, kills {_kills}");
        return false;
    }

    /// <summary>Gets how many distinct jobs completed (HLEN of the runs hash), or <see langword="null"/> while Redis cannot say.</summary>
    private async Task<long?> CountCompletedAsync()
    {
        try
        {
            return await Monitor.HashLengthAsync(_keys.Runs);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            return null;
        }
    }

    /// <summary>
    /// Gets how many entries the queue still has in Redis (in the stream, waiting, pending or not, plus delayed retries),
    /// read in one script so that an entry moving between the two is counted once; <see langword="null"/> while Redis cannot say.
    /// </summary>
    private async Task<long?> UnfinishedInRedisAsync()
    {
        try
        {
            return (long)await Monitor.ScriptEvaluateAsync(
                "return redis.call('XLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2])", [_keys.Stream, _keys.Delayed]);
        }
        catch (Exception ex) when (ex is RedisException or TimeoutException)
        {
            return null;
        }
    }

    private WorkerProcess StartWorker()
    {
        var worker = WorkerProcess.Start(++_nextWorkerNumber, RedisConfiguration, _keys.Prefix, _settings.ClaimTimeoutMs, _settings.HeartbeatMs, _workerLog);
        _workers.Add(worker);
        return worker;
    }

    private void ReplaceCrashedWorkers()
    {
        foreach (var crashed in _workers.Where(w => w.ExitedUnexpectedly).ToArray())
        {
            _workerCrashes++;
            Say($"worker {crashed.Number} (pid {crashed.Pid}) exited by itself with code {crashed.ExitCode}: replaced; see {_workerLog.Path}");
            _workers.Remove(crashed);
            _retired.Add(crashed);
            StartWorker();
        }
    }

    /// <summary>Waits a little for a side task that should have ended with the load, and says how it failed if it did.</summary>
    private async Task ObserveAsync(Task task, string what)
    {
        try
        {
            await task.WaitAsync(TimeSpan.FromSeconds(30));
        }
        catch (Exception ex)
        {
            Say($"{what} did not finish: {ex.GetType().Name}: {ex.Message}");
        }
    }

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    private void Say(string text) => ChaosReport.Say(Elapsed, text);

    public async ValueTask DisposeAsync()
    {
        foreach (var worker in _workers.Concat(_retired))
        {
            worker.Dispose();
        }

        if (_producerHost is not null)
        {
            _producerHost.Dispose();
        }

        if (_monitor is not null)
        {
            await _monitor.DisposeAsync();
        }

        _redis.Dispose();
        if (_sentinel is not null)
        {
            await _sentinel.DisposeAsync();
        }

        if (_cluster is not null)
        {
            await _cluster.DisposeAsync();
        }

        _workerLog.Dispose();
        if (!_keepDirectory)
        {
            _directory.Delete(recursive: true);
        }
    }
}
