using System.Diagnostics;
using System.Globalization;
using System.Reflection;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Hangfire on Redis storage in a child process (the WorkQueue.Benchmarks.HangfireRedis project, built with this one):
/// Hangfire.Redis.StackExchange needs StackExchange.Redis 2.x, which cannot load next to the 3.x WorkQueue.AspNetCore
/// uses. Each method sends one command line to the child's stdin and waits for its reply line (the protocol is in the
/// child's Program.cs); the child is stopped on <see cref="Dispose"/>.
/// </summary>
public sealed class HangfireRedisProcess : IDisposable
{
    private static readonly TimeSpan ReplyTimeout = TimeSpan.FromMinutes(10);

    private readonly Process _process;

    private HangfireRedisProcess(Process process)
    {
        _process = process;
    }

    /// <summary>Gets the child's id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>Starts the child: storage on <paramref name="redis"/>, a client and a server with <paramref name="workers"/> workers.</summary>
    /// <param name="redis">The StackExchange.Redis configuration string.</param>
    /// <param name="workers">The server's <c>WorkerCount</c>.</param>
    /// <returns>The started child.</returns>
    public static HangfireRedisProcess Start(string redis, int workers) =>
        Launch(string.Create(CultureInfo.InvariantCulture, $"start {redis} {workers}"));

    /// <summary>
    /// Starts the child: storage on <paramref name="redis"/>, a client and a server with <paramref name="workers"/>
    /// workers whose delayed-job scheduler polls every <paramref name="schedulePollingInterval"/>.
    /// </summary>
    /// <param name="redis">The StackExchange.Redis configuration string.</param>
    /// <param name="workers">The server's <c>WorkerCount</c>.</param>
    /// <param name="schedulePollingInterval">The server's <c>SchedulePollingInterval</c>, in whole milliseconds (zero: back to back).</param>
    /// <returns>The started child.</returns>
    public static HangfireRedisProcess Start(string redis, int workers, TimeSpan schedulePollingInterval) =>
        Launch(string.Create(CultureInfo.InvariantCulture, $"start {redis} {workers} {(long)schedulePollingInterval.TotalMilliseconds}"));

    /// <summary>Has the child schedule one delayed job and waits until it has started.</summary>
    /// <param name="id">The job's argument (the sample's number).</param>
    /// <param name="delay">How long from the call the job is due.</param>
    /// <param name="timeout">How long the child waits for the job before failing.</param>
    /// <returns>The lateness in milliseconds the child measured: the job's first line minus its due time, on its own clock.</returns>
    public double Schedule(int id, TimeSpan delay, TimeSpan timeout) => double.Parse(
        Send(string.Create(CultureInfo.InvariantCulture, $"schedule {id} {delay.Ticks} {(int)Math.Ceiling(timeout.TotalSeconds)}"), "late"),
        CultureInfo.InvariantCulture);

    private static HangfireRedisProcess Launch(string startCommand)
    {
        string path = typeof(HangfireRedisProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "HangfireRedisAgentPath").Value!;
        var start = new ProcessStartInfo("dotnet", [path])
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        var agent = new HangfireRedisProcess(Process.Start(start) ?? throw new InvalidOperationException($"{path} did not start."));
        agent.Send(startCommand, "ready");
        return agent;
    }

    /// <summary>Has <paramref name="producers"/> threads enqueue <paramref name="jobs"/> jobs and waits until every one has run.</summary>
    /// <param name="jobs">The jobs in all.</param>
    /// <param name="producers">The producer threads.</param>
    /// <returns>The time the child measured from the first enqueue to the last job's end.</returns>
    public TimeSpan RunBatch(int jobs, int producers) =>
        TimeSpan.FromMilliseconds(double.Parse(Send(string.Create(CultureInfo.InvariantCulture, $"batch {jobs} {producers}"), "done"), CultureInfo.InvariantCulture));

    /// <summary>Enqueues one job on the idle server and waits until it starts.</summary>
    /// <returns>The time the child measured from the enqueue call to the job's start.</returns>
    public TimeSpan WakeUp() => TimeSpan.FromMicroseconds(double.Parse(Send("wake", "started"), CultureInfo.InvariantCulture));

    /// <summary>Gets the worker count the child's server registered in Redis.</summary>
    /// <returns>The registered workers.</returns>
    public int RegisteredWorkers() => int.Parse(Send("workers", "workers"), CultureInfo.InvariantCulture);

    /// <summary>Gets the child's CPU time so far (user + kernel, every thread).</summary>
    /// <returns>The CPU time.</returns>
    public TimeSpan CpuTime()
    {
        _process.Refresh();
        return _process.TotalProcessorTime;
    }

    /// <summary>Stops the child's server and waits for the child to exit (kills it after 30 s).</summary>
    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.StandardInput.WriteLine("stop");
                _process.StandardInput.Flush();
                if (!_process.WaitForExit(TimeSpan.FromSeconds(30)))
                {
                    _process.Kill();
                }
            }
        }
        catch (IOException)
        {
            // It exited meanwhile.
        }

        _process.Dispose();
    }

    private string Send(string command, string expected)
    {
        _process.StandardInput.WriteLine(command);
        _process.StandardInput.Flush();
        var read = _process.StandardOutput.ReadLineAsync();
        if (!read.Wait(ReplyTimeout))
        {
            throw new TimeoutException($"Hangfire on Redis (child process {_process.Id}) did not answer '{command}' within {ReplyTimeout.TotalMinutes:0} min.");
        }

        string reply = read.Result ?? throw new InvalidOperationException($"Hangfire on Redis (child process {_process.Id}) exited on '{command}'.");
        string[] words = reply.Split(' ', 2);
        return words[0] == expected
            ? (words.Length > 1 ? words[1] : string.Empty)
            : throw new InvalidOperationException($"Hangfire on Redis (child process {_process.Id}) answered '{command}' with: {reply}");
    }
}
