using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// BullMQ on Redis in a Node.js child process: the script in <c>benchmarks/bullmq-agent/</c> (its packages installed by
/// that folder's <c>install.sh</c>, which this class runs first), driven like <see cref="HangfireRedisProcess"/>: each
/// method sends one command line to the child's stdin and waits for its reply line (the protocol is in the agent's
/// <c>agent.js</c>); the child is stopped on <see cref="Dispose"/>.
/// </summary>
public sealed class BullMqProcess : IDisposable
{
    /// <summary>
    /// What the agent's Worker does with a completed job (its <c>removeOnComplete</c>): keep it 600 s, WorkQueue's
    /// default <c>FinishedJobRetention</c> (10 minutes) for its own records of successes, so both keep what a run
    /// completes (see benchmarks/README.md).
    /// </summary>
    public const string KeepCompletedTenMinutes = "age:600";

    private static readonly TimeSpan ReplyTimeout = TimeSpan.FromMinutes(10);
    private static readonly TimeSpan InstallTimeout = TimeSpan.FromMinutes(5);

    private readonly Process _process;

    private BullMqProcess(Process process)
    {
        _process = process;
    }

    /// <summary>How producers hand their jobs to BullMQ.</summary>
    public enum AddMode
    {
        /// <summary>One <c>queue.add</c> per job.</summary>
        Add,

        /// <summary>One <c>queue.addBulk</c> per producer's window of jobs.</summary>
        AddBulk,
    }

    /// <summary>Gets the child's id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>
    /// Installs the agent's packages if needed, then starts it: a BullMQ <c>Queue</c> and a <c>Worker</c> with
    /// <paramref name="concurrency"/> on the redis-server at <paramref name="redis"/>.
    /// </summary>
    /// <param name="redis">The server's address, <c>host:port</c> (a StackExchange.Redis configuration string of one endpoint).</param>
    /// <param name="concurrency">The Worker's <c>concurrency</c>: jobs it runs at once.</param>
    /// <param name="removeOnComplete">The Worker's <c>removeOnComplete</c>, in the agent's words (<see cref="KeepCompletedTenMinutes"/>).</param>
    /// <returns>The started child.</returns>
    /// <exception cref="InvalidOperationException">Node.js or npm is missing, or the install or the start failed.</exception>
    public static BullMqProcess Start(string redis, int concurrency, string removeOnComplete = KeepCompletedTenMinutes)
    {
        string directory = AgentDirectory();
        Install(directory);
        var start = new ProcessStartInfo("node", ["agent.js"])
        {
            WorkingDirectory = directory,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException($"node {directory}/agent.js did not start.");
        }
        catch (Win32Exception ex)
        {
            throw new InvalidOperationException($"The BullMQ rows need Node.js 20 or later on PATH: 'node' could not be started ({ex.Message}).", ex);
        }

        var agent = new BullMqProcess(process);
        agent.Send(string.Create(CultureInfo.InvariantCulture, $"start {redis} {concurrency} {removeOnComplete}"), "ready");
        return agent;
    }

    /// <summary>
    /// Has <paramref name="producers"/> producers add <paramref name="jobs"/> jobs in all, each with up to
    /// <paramref name="inFlight"/> adds awaited at a time, and waits until every one has run.
    /// </summary>
    /// <param name="jobs">The jobs in all.</param>
    /// <param name="producers">The producers (async loops in the child's one event loop).</param>
    /// <param name="inFlight">The adds each producer awaits at a time: that many <c>add</c> calls, or one <c>addBulk</c> of that many.</param>
    /// <param name="mode">How the jobs are added.</param>
    /// <returns>The time the child measured from the first add to the last job's start.</returns>
    public TimeSpan RunBatch(int jobs, int producers, int inFlight, AddMode mode) =>
        TimeSpan.FromMilliseconds(double.Parse(
            Send(string.Create(CultureInfo.InvariantCulture, $"batch {jobs} {producers} {inFlight} {(mode == AddMode.Add ? "add" : "addBulk")}"), "done"),
            CultureInfo.InvariantCulture));

    /// <summary>Has the child add one delayed job (the <c>delay</c> option) and waits until it has started.</summary>
    /// <param name="id">The job's data (the sample's number).</param>
    /// <param name="delay">How long from the call the job is due.</param>
    /// <param name="timeout">How long the child waits for the job before failing.</param>
    /// <returns>The lateness in milliseconds the child measured: the job's first line minus its due time, on its own clock.</returns>
    public double Schedule(int id, TimeSpan delay, TimeSpan timeout) => double.Parse(
        Send(string.Create(CultureInfo.InvariantCulture, $"schedule {id} {delay.Ticks} {(int)Math.Ceiling(timeout.TotalSeconds)}"), "late"),
        CultureInfo.InvariantCulture);

    /// <summary>Gets the child's CPU time so far (user + kernel, every thread).</summary>
    /// <returns>The CPU time.</returns>
    public TimeSpan CpuTime()
    {
        _process.Refresh();
        return _process.TotalProcessorTime;
    }

    /// <summary>Closes the child's worker and queue and waits for it to exit (kills it after 30 s).</summary>
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

    private static string AgentDirectory() =>
        typeof(BullMqProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "BullMqAgentDirectory").Value!;

    // install.sh returns at once when node_modules matches the lock file; it names what is missing when it fails.
    private static void Install(string directory)
    {
        var start = new ProcessStartInfo("bash", [Path.Combine(directory, "install.sh")])
        {
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        using var install = Process.Start(start) ?? throw new InvalidOperationException($"{directory}/install.sh did not start.");
        var errors = install.StandardError.ReadToEndAsync();
        if (!install.WaitForExit(InstallTimeout))
        {
            install.Kill();
            throw new InvalidOperationException($"{directory}/install.sh (npm ci) did not finish within {InstallTimeout.TotalMinutes:0} min.");
        }

        if (install.ExitCode != 0)
        {
            throw new InvalidOperationException(
                $"{directory}/install.sh failed (exit code {install.ExitCode}); the BullMQ rows need Node.js 20 or later and npm on PATH: {errors.Result.Trim()}");
        }
    }

    private string Send(string command, string expected)
    {
        _process.StandardInput.WriteLine(command);
        _process.StandardInput.Flush();
        var read = _process.StandardOutput.ReadLineAsync();
        if (!read.Wait(ReplyTimeout))
        {
            throw new TimeoutException($"BullMQ (child process {_process.Id}) did not answer '{command}' within {ReplyTimeout.TotalMinutes:0} min.");
        }

        string reply = read.Result ?? throw new InvalidOperationException($"BullMQ (child process {_process.Id}) exited on '{command}'.");
        string[] words = reply.Split(' ', 2);
        return words[0] == expected
            ? (words.Length > 1 ? words[1] : string.Empty)
            : throw new InvalidOperationException($"BullMQ (child process {_process.Id}) answered '{command}' with: {reply}");
    }
}
