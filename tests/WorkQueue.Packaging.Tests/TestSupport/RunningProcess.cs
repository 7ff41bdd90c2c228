using System.Diagnostics;
using System.Text;

namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>A started child process whose standard output and error are captured, interleaved, as they come.</summary>
internal sealed class RunningProcess : IDisposable
{
    private readonly StringBuilder _output = new();
    private readonly object _lock = new();
    private readonly List<(string Prefix, TaskCompletionSource<string> Line)> _lineWaiters = [];
    private bool _outputEnded;

    public RunningProcess(ProcessStartInfo startInfo)
    {
        CommandLine = $"{Path.GetFileName(startInfo.FileName)} {string.Join(' ', startInfo.ArgumentList)}";
        Process = new Process { StartInfo = startInfo };
        Process.OutputDataReceived += (_, e) => OnLine(e.Data, endsOutput: true);
        Process.ErrorDataReceived += (_, e) => OnLine(e.Data, endsOutput: false);
        Process.Start();
        Process.BeginOutputReadLine();
        Process.BeginErrorReadLine();
    }

    public Process Process { get; }

    public string CommandLine { get; }

    public string Output
    {
        get
        {
            lock (_lock)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>
    /// Completes with the first output line that starts with <paramref name="prefix"/>; fails if standard output ends
    /// (the process exited) first.
    /// </summary>
    public Task<string> LineStartingWithAsync(string prefix)
    {
        var line = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            foreach (var existing in _output.ToString().Split('\n'))
            {
                if (existing.StartsWith(prefix, StringComparison.Ordinal))
                {
                    line.SetResult(existing.TrimEnd('\r'));
                    return line.Task;
                }
            }

            if (!_outputEnded)
            {
                _lineWaiters.Add((prefix, line));
                return line.Task;
            }
        }

        line.SetException(new InvalidOperationException($"`{CommandLine}` exited without printing a line that starts with '{prefix}'."));
        return line.Task;
    }

    /// <summary>Starts <paramref name="fileName"/> (a native program) with <paramref name="arguments"/> and runs it to completion, or kills it after <paramref name="timeout"/>.</summary>
    public static async Task<CommandResult> RunAsync(string fileName, IReadOnlyList<string> arguments, TimeSpan timeout)
    {
        var startInfo = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
            StandardOutputEncoding = Encoding.UTF8,
            StandardErrorEncoding = Encoding.UTF8,
        };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        using var process = new RunningProcess(startInfo);
        return await process.WaitAsync(timeout);
    }

    /// <summary>
    /// Waits for the process to exit and for the end of both output streams, or kills its process tree after
    /// <paramref name="timeout"/>; returns its exit code and everything it printed.
    /// </summary>
    public async Task<CommandResult> WaitAsync(TimeSpan timeout)
    {
        var stopwatch = Stopwatch.StartNew();
        using var cts = new CancellationTokenSource(timeout);
        bool timedOut = false;
        try
        {
            await Process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            timedOut = true;
            Kill();
        }

        return new CommandResult(CommandLine, timedOut ? -1 : Process.ExitCode, timedOut, stopwatch.Elapsed, Output);
    }

    /// <summary>Kills the process and all its children, and waits for them to go.</summary>
    public void Kill()
    {
        try
        {
            if (!Process.HasExited)
            {
                Process.Kill(entireProcessTree: true);
            }

            Process.WaitForExit(10_000);
        }
        catch (InvalidOperationException)
        {
            // It was never started or has already been reaped.
        }
    }

    public void Dispose()
    {
        Kill();
        Process.Dispose();
    }

    private void OnLine(string? line, bool endsOutput)
    {
        if (line is null)
        {
            if (endsOutput)
            {
                FailLineWaiters();
            }

            return;
        }

        List<TaskCompletionSource<string>> matched = [];
        lock (_lock)
        {
            _output.AppendLine(line);
            foreach (var waiter in _lineWaiters.Where(w => line.StartsWith(w.Prefix, StringComparison.Ordinal)).ToList())
            {
                _lineWaiters.Remove(waiter);
                matched.Add(waiter.Line);
            }
        }

        foreach (var waiter in matched)
        {
            waiter.TrySetResult(line);
        }
    }

    private void FailLineWaiters()
    {
        List<TaskCompletionSource<string>> waiters;
        lock (_lock)
        {
            _outputEnded = true;
            waiters = _lineWaiters.Select(w => w.Line).ToList();
            _lineWaiters.Clear();
        }

        foreach (var waiter in waiters)
        {
            waiter.TrySetException(new InvalidOperationException($"`{CommandLine}` exited before printing the expected line."));
        }
    }
}
