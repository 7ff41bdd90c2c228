using System.Diagnostics;
using System.Globalization;
using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// <c>recurring</c>: the proof that a durable recurring job runs each occurrence once across instances, and loses none
/// when instances die. Starts its own redis-server and <c>--workers</c> worker processes that all register the same
/// every-second recurring job on a durable queue; for <c>--seconds</c> it SIGKILLs a random worker every kill interval
/// (0 = never), just after a whole second on Redis's clock, choosing the worker that is running that second's occurrence
/// (each run takes 100-300 ms), and starts a replacement at once, so at least <c>workers - 1</c> run at all times. It then keeps every
/// worker alive for two claim timeouts and a few seconds (a killed worker's occurrence is reclaimed and run), and checks
/// every whole second from the first after all workers were ready to the end of the kills:
/// <list type="bullet">
/// <item><c>lost</c>: occurrences that never completed (must be 0);</item>
/// <item><c>duplicates</c>: extra completed runs of an occurrence; <c>duplicates_explained</c> are those of an
/// occurrence that a killed worker had started (it may have completed it before the library acknowledged it, then it ran
/// again where it was reclaimed: at-least-once), <c>duplicates_unexplained</c> all others (must be 0);</item>
/// <item><c>occurrences_interrupted</c>: occurrences a killed worker started and never finished (each was reclaimed
/// and completed elsewhere, or it would be lost): shows the kills hit runs.</item>
/// </list>
/// Exit code 0 when nothing was lost or run twice without a kill to explain it, 1 otherwise, 2 when the run fell short.
/// </summary>
internal sealed class RecurringChaosController : IAsyncDisposable
{
    private static readonly TimeSpan WorkerReadyTimeout = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan WorkerStopTimeout = TimeSpan.FromSeconds(30);

    private readonly RecurringChaosSettings _settings;
    private readonly ChaosKeys _keys;
    private readonly DirectoryInfo _directory;
    private readonly ChaosRedisServer _redis;
    private readonly WorkerLog _workerLog;
    private readonly Stopwatch _clock = new();
    private readonly List<WorkerProcess> _workers = [];
    private readonly List<WorkerProcess> _retired = [];
    private readonly HashSet<int> _killedPids = [];
    private ConnectionMultiplexer? _monitor;
    private int _nextWorkerNumber;
    private int _workerCrashes;

    public RecurringChaosController(RecurringChaosSettings settings)
    {
        _settings = settings;
        _keys = new ChaosKeys(settings.Prefix);
        _directory = Directory.CreateTempSubdirectory("workqueue-recurring-chaos-");
        _redis = new ChaosRedisServer(ChaosRedisServer.FreePort(), _directory.FullName, "everysec");
        _workerLog = new WorkerLog(Path.Combine(_directory.FullName, "workers.log"));
    }

    private IDatabase Db => _monitor!.GetDatabase();

    public async Task<int> RunAsync()
    {
        _clock.Start();
        using var timeout = new CancellationTokenSource(_settings.Timeout);
        await _redis.StartAsync();
        Say($"redis-server on {_redis.Configuration}, run directory {_directory.FullName}");
        _monitor = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { _redis.Configuration }, AbortOnConnectFail = false });

        for (int i = 0; i < _settings.Workers; i++)
        {
            StartWorker();
        }

        await Task.WhenAll(_workers.Select(w => w.Ready)).WaitAsync(WorkerReadyTimeout);
        long first = (await RedisNowMsAsync() / 1000 * 1000) + 1000;
        Say($"{_settings.Workers} workers ready; checking occurrences from {Stamp(first)}");

        // The chaos: a kill near a second boundary every kill interval until the run's seconds are over.
        var chaosEnds = _clock.Elapsed + TimeSpan.FromSeconds(_settings.Seconds);
        int kills = 0, killsDuringRun = 0;
        while (_clock.Elapsed < chaosEnds && !timeout.IsCancellationRequested)
        {
            var next = _settings.KillInterval > TimeSpan.Zero ? _settings.KillInterval : chaosEnds - _clock.Elapsed;
            await Task.Delay(Min(next, chaosEnds - _clock.Elapsed), timeout.Token);
            ReplaceCrashedWorkers();
            if (_settings.KillInterval > TimeSpan.Zero && _clock.Elapsed < chaosEnds)
            {
                killsDuringRun += await KillNearBoundaryAsync(timeout.Token) ? 1 : 0;
                kills++;
            }
        }

        long last = await RedisNowMsAsync() / 1000 * 1000;
        var settle = TimeSpan.FromMilliseconds((2 * _settings.ClaimTimeoutMs) + 5_000);
        Say($"{kills} kills; chaos over at {Stamp(last)}; every worker alive for {settle.TotalSeconds:F0} s so reclaimed occurrences run");
        await Task.Delay(settle, timeout.Token);
        ReplaceCrashedWorkers();

        ChaosReport.Write("kills_during_run", killsDuringRun);
        int result = await ReportAsync(first, last, kills);
        await StopWorkersAsync();
        return result;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var worker in _workers.Concat(_retired))
        {
            worker.Dispose();
        }

        _monitor?.Dispose();
        _redis.Dispose();
        _workerLog.Dispose();
        if (!_settings.KeepDirectory)
        {
            try
            {
                _directory.Delete(recursive: true);
            }
            catch (IOException)
            {
                // Left for the OS to clean.
            }
        }

        await Task.CompletedTask;
    }

    private async Task<bool> KillNearBoundaryAsync(CancellationToken cancellationToken)
    {
        // Just after the next whole second on Redis's clock, the worker running that occurrence is the victim: the run
        // is cut mid-way (started, not finished) and must be reclaimed. If no run is seen within half a second, a random
        // worker is killed instead, at that moment.
        long now = await RedisNowMsAsync();
        long boundary = ((now / 1000) + 1) * 1000;
        await Task.Delay(TimeSpan.FromMilliseconds(boundary - now + Random.Shared.Next(0, 50)), cancellationToken);
        WorkerProcess? victim = null;
        for (int look = 0; look < 50 && victim is null; look++)
        {
            var started = (await OccurrencePidsAsync(_keys.TickStarts))[boundary].ToHashSet();
            started.ExceptWith((await OccurrencePidsAsync(_keys.TickEnds))[boundary]);
            victim = _workers.FirstOrDefault(w => !w.HasExited && started.Contains(w.Pid));
            if (victim is null)
            {
                await Task.Delay(10, cancellationToken);
            }
        }

        bool duringRun = victim is not null;
        var running = _workers.Where(w => !w.HasExited).ToArray();
        victim ??= running[Random.Shared.Next(running.Length)];
        long killedAt = await RedisNowMsAsync();
        await victim.KillAsync();
        _killedPids.Add(victim.Pid);
        _workers.Remove(victim);
        _retired.Add(victim);
        var replacement = StartWorker();
        Say($"SIGKILLed worker {victim.Number} (pid {victim.Pid}) {killedAt - boundary:+0;-0} ms after {Stamp(boundary)}, {(duringRun ? "while it ran that occurrence" : "no run of it seen: a random worker")}; worker {replacement.Number} (pid {replacement.Pid}) started");
        return duringRun;
    }

    private async Task<int> ReportAsync(long first, long last, int kills)
    {
        var runs = (await Db.HashGetAllAsync(_keys.TickRuns)).ToDictionary(e => long.Parse((string)e.Name!, CultureInfo.InvariantCulture), e => (long)e.Value);
        var starts = await OccurrencePidsAsync(_keys.TickStarts);
        var ends = await OccurrencePidsAsync(_keys.TickEnds);

        long expected = ((last - first) / 1000) + 1;
        var lost = new List<long>();
        long duplicates = 0, explained = 0, unexplained = 0, interrupted = 0;
        for (long occurrence = first; occurrence <= last; occurrence += 1000)
        {
            long count = runs.GetValueOrDefault(occurrence);
            bool killedStart = starts[occurrence].Any(_killedPids.Contains);
            interrupted += starts[occurrence].Any(pid => _killedPids.Contains(pid) && !ends[occurrence].Contains(pid)) ? 1 : 0;
            if (count == 0)
            {
                lost.Add(occurrence);
            }
            else if (count > 1)
            {
                duplicates += count - 1;
                if (killedStart)
                {
                    explained += count - 1;
                }
                else
                {
                    unexplained += count - 1;
                    Say($"occurrence {Stamp(occurrence)} ran {count} times, started by pids {string.Join(", ", starts[occurrence])}, none of them killed");
                }
            }
        }

        foreach (long occurrence in lost)
        {
            Say($"occurrence {Stamp(occurrence)} never completed (starts by pids: {string.Join(", ", starts[occurrence])})");
        }

        ChaosReport.Write("workers", _settings.Workers);
        ChaosReport.Write("kills", kills);
        ChaosReport.Write("occurrences_expected", expected);
        ChaosReport.Write("occurrences_run", runs.Keys.Count(o => o >= first && o <= last));
        ChaosReport.Write("runs_total", runs.Values.Sum());
        ChaosReport.Write("lost", lost.Count);
        ChaosReport.Write("duplicates", duplicates);
        ChaosReport.Write("duplicates_explained", explained);
        ChaosReport.Write("duplicates_unexplained", unexplained);
        ChaosReport.Write("occurrences_interrupted", interrupted);
        ChaosReport.Write("worker_crashes", _workerCrashes);
        ChaosReport.Write("worker_log_errors", _workerLog.Errors);

        if (lost.Count > 0 || unexplained > 0)
        {
            Say($"FAILED: {lost.Count} occurrences lost, {unexplained} duplicates without a kill to explain them; worker log {_workerLog.Path}");
            return 1;
        }

        if (_workerCrashes > 0 || expected < _settings.Seconds - 2)
        {
            Say($"SHORT: {_workerCrashes} worker crashes, {expected} occurrences checked for {_settings.Seconds} s");
            return 2;
        }

        Say($"OK: {expected} occurrences, each completed (none lost); {duplicates} duplicates, all after a kill of the worker that started them");
        return 0;
    }

    private async Task StopWorkersAsync()
    {
        foreach (var worker in _workers)
        {
            await worker.TerminateAsync(WorkerStopTimeout);
        }
    }

    private WorkerProcess StartWorker()
    {
        var worker = WorkerProcess.Start(++_nextWorkerNumber, _redis.Configuration, _keys.Prefix, _settings.ClaimTimeoutMs, _settings.HeartbeatMs, _workerLog, recurring: true);
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

    private async Task<ILookup<long, int>> OccurrencePidsAsync(string key) =>
        (await Db.ListRangeAsync(key))
            .Select(v => ((string)v!).Split('|'))
            .Select(p => (Occurrence: long.Parse(p[0], CultureInfo.InvariantCulture), Pid: int.Parse(p[1], CultureInfo.InvariantCulture)))
            .ToLookup(s => s.Occurrence, s => s.Pid);

    private async Task<long> RedisNowMsAsync()
    {
        var time = (RedisResult[])(await Db.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000) + ((long)time[1] / 1000);
    }

    private static string Stamp(long unixMs) => DateTimeOffset.FromUnixTimeMilliseconds(unixMs).ToString("HH:mm:ss", CultureInfo.InvariantCulture);

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    private void Say(string text) => ChaosReport.Say(_clock.Elapsed, text);
}
