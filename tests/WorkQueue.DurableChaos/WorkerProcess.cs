using System.Diagnostics;
using System.Globalization;

namespace WorkQueue.DurableChaos;

/// <summary>One worker: this program in <c>worker</c> mode, in its own OS process, its output going to the run's worker log.</summary>
internal sealed class WorkerProcess : IDisposable
{
    private readonly Process _process;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _stopIntended;

    private WorkerProcess(int number, Process process)
    {
        Number = number;
        _process = process;
        Pid = process.Id;
    }

    /// <summary>Gets the worker's number in the run (1, 2, ... in the order they were started).</summary>
    public int Number { get; }

    public int Pid { get; }

    /// <summary>Gets the start of the library's consumer names for this process (host:pid:random, new per start).</summary>
    public string ConsumerPrefix => string.Create(CultureInfo.InvariantCulture, $"{Environment.MachineName}:{Pid}:");

    /// <summary>Completes once the worker's host has started.</summary>
    public Task Ready => _ready.Task;

    public bool HasExited => _process.HasExited;

    /// <summary>Gets a value indicating whether the process exited without being told to (a crash).</summary>
    public bool ExitedUnexpectedly => _process.HasExited && !_stopIntended;

    public int ExitCode => _process.ExitCode;

    public static WorkerProcess Start(int number, string redis, string prefix, int claimTimeoutMs, int heartbeatMs, WorkerLog log, bool recurring = false)
    {
        string self = typeof(WorkerProcess).Assembly.Location;
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string arg in (string[])[
            self, "worker", "--redis", redis, "--prefix", prefix,
            "--claim-timeout-ms", claimTimeoutMs.ToString(CultureInfo.InvariantCulture), "--heartbeat-ms", heartbeatMs.ToString(CultureInfo.InvariantCulture)])
        {
            start.ArgumentList.Add(arg);
        }

        if (recurring)
        {
            start.ArgumentList.Add("--recurring");
        }

        var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start.");
        var worker = new WorkerProcess(number, process);
        string source = string.Create(CultureInfo.InvariantCulture, $"w{number} pid {worker.Pid}");
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                worker._ready.TrySetException(new InvalidOperationException($"Worker {number} (pid {worker.Pid}) ended its output before it was ready."));
                return;
            }

            if (e.Data.StartsWith(WorkerCommand.ReadyLine, StringComparison.Ordinal))
            {
                worker._ready.TrySetResult();
            }

            log.Write(source, e.Data);
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                log.Write(source, e.Data);
            }
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return worker;
    }

    /// <summary>SIGKILL: the process ends at once, in the middle of whatever it was doing.</summary>
    public async Task KillAsync()
    {
        _stopIntended = true;
        _process.Kill();
        await _process.WaitForExitAsync();
    }

    /// <summary>SIGTERM, as a deploy sends it; the host stops gracefully. Killed if it has not exited within <paramref name="timeout"/>.</summary>
    /// <returns><see langword="true"/> when it exited by itself.</returns>
    public async Task<bool> TerminateAsync(TimeSpan timeout)
    {
        _stopIntended = true;
        if (_process.HasExited)
        {
            return true;
        }

        using (var kill = Process.Start(new ProcessStartInfo("kill", ["-TERM", Pid.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false }))
        {
            await kill!.WaitForExitAsync();
        }

        using var wait = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(wait.Token);
            return true;
        }
        catch (OperationCanceledException) when (wait.IsCancellationRequested)
        {
            _process.Kill();
            await _process.WaitForExitAsync();
            return false;
        }
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _stopIntended = true;
            _process.Kill();
            _process.WaitForExit();
        }

        _process.Dispose();
    }
}
