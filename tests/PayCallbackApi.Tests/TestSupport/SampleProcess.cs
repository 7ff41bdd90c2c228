using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.RegularExpressions;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>
/// The built PayCallbackApi run as its own process (<c>dotnet PayCallbackApi.dll</c>, as a deploy runs it), on a free
/// loopback port, against a real redis-server, so that it can be sent a real SIGTERM. Its console log is kept.
/// </summary>
internal sealed partial class SampleProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _log = new();
    private readonly TaskCompletionSource<Uri> _listening = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private SampleProcess(Process process)
    {
        _process = process;
    }

    /// <summary>Gets the address the app listens on.</summary>
    public Uri BaseAddress { get; private set; } = null!;

    /// <summary>Gets the console log lines so far (all of them once the process has exited).</summary>
    public IReadOnlyList<string> Log => [.. _log];

    /// <summary>
    /// Starts the sample (in Queue mode unless <paramref name="settings"/> say otherwise) and waits until it listens (its
    /// Redis warm-up is done by then).
    /// </summary>
    public static async Task<SampleProcess> StartAsync(RedisServer redis, IReadOnlyDictionary<string, string> settings)
    {
        // The test project references the sample, so its dll, deps and runtimeconfig sit next to the tests' own.
        string dll = typeof(Program).Assembly.Location;
        var start = new ProcessStartInfo("dotnet", [dll, "--urls", "http://127.0.0.1:0", "--contentRoot", AppContext.BaseDirectory])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.Environment["ConnectionStrings__Redis"] = redis.Configuration;
        start.Environment["PayCallback__SigningKey"] = PayCallbackApp.SigningKey;
        start.Environment["PayCallback__Mode"] = nameof(ProcessingMode.Queue);
        start.Environment["DOTNET_ENVIRONMENT"] = "Production";
        start.Environment["ASPNETCORE_ENVIRONMENT"] = "Production";
        start.Environment["Logging__Console__FormatterName"] = "simple";
        start.Environment["Logging__Console__FormatterOptions__SingleLine"] = "true";
        foreach (var (key, value) in settings)
        {
            start.Environment[key] = value;
        }

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        var sample = new SampleProcess(process);
        process.OutputDataReceived += (_, e) => sample.OnLine(e.Data);
        process.ErrorDataReceived += (_, e) => sample.OnLine(e.Data);
        process.Exited += (_, _) => sample._listening.TrySetException(new InvalidOperationException("The sample exited during start-up:\n" + string.Join('\n', sample.Log)));
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            sample.BaseAddress = await Wait.ForAsync(sample._listening.Task, "the sample to listen (its 'Now listening on' log line)");
        }
        catch
        {
            await sample.DisposeAsync();
            throw;
        }

        return sample;
    }

    /// <summary>Sends SIGTERM, as a deploy (systemd, Kubernetes, docker stop) does.</summary>
    public async Task SendSigtermAsync()
    {
        // Process.Kill sends SIGKILL; the shell's kill sends the signal a host handles as a graceful stop.
        using var kill = Process.Start(new ProcessStartInfo("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]) { UseShellExecute = false })!;
        await Wait.ForAsync(kill.WaitForExitAsync(), "kill -TERM to return");
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>Kills the process with SIGKILL, as the OOM killer or a crash would end it: no shutdown code runs.</summary>
    public async Task KillAsync()
    {
        _process.Kill(entireProcessTree: true);
        await Wait.ForAsync(_process.WaitForExitAsync(), "the killed sample to exit");
    }

    /// <summary>Waits for the process to exit and its output to be read to the end; returns its exit code.</summary>
    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            Assert.Fail($"The sample had not exited {timeout.TotalSeconds} s after SIGTERM. Last log lines:\n{string.Join('\n', Log.TakeLast(20))}");
        }

        return _process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
    }

    private void OnLine(string? line)
    {
        if (line is null)
        {
            return;
        }

        _log.Enqueue(line);
        if (ListeningLine().Match(line) is { Success: true } match)
        {
            _listening.TrySetResult(new Uri(match.Groups[1].Value));
        }
    }

    [GeneratedRegex(@"Now listening on: (http://\S+)")]
    private static partial Regex ListeningLine();
}
