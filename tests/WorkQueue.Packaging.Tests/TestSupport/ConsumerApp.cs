namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>
/// A web app outside the solution that references WorkQueue.AspNetCore by version from the temporary feed only, with
/// its own empty NuGet package folder, so that its restore proves the packages stand on their own.
/// </summary>
internal sealed class ConsumerApp : IDisposable
{
    public static readonly TimeSpan BuildTimeout = TimeSpan.FromMinutes(3);

    public static readonly TimeSpan StartTimeout = TimeSpan.FromMinutes(1);

    private readonly PackagedFeed _feed;
    private RunningProcess? _process;

    public ConsumerApp(PackagedFeed feed)
    {
        _feed = feed;
        Directory = Path.Combine(feed.WorkDirectory, "consumer");
        PackagesDirectory = Path.Combine(feed.WorkDirectory, "nuget-packages");
    }

    public string Directory { get; }

    /// <summary>Gets the app's own NUGET_PACKAGES folder, empty before its restore.</summary>
    public string PackagesDirectory { get; }

    /// <summary>Gets what the running app has printed so far, for failure messages.</summary>
    public string Output => _process?.Output ?? "(not started)";

    private IReadOnlyDictionary<string, string> Environment => new Dictionary<string, string>
    {
        ["NUGET_PACKAGES"] = PackagesDirectory,
    };

    public async Task<CommandResult> BuildAsync()
    {
        System.IO.Directory.CreateDirectory(Directory);
        System.IO.Directory.CreateDirectory(PackagesDirectory);
        Write("Consumer.csproj", ConsumerAppSource.Project(_feed.Version));
        Write("Program.cs", ConsumerAppSource.Program);
        Write("nuget.config", ConsumerAppSource.NuGetConfig(_feed.FeedDirectory));
        Write("Directory.Build.props", ConsumerAppSource.EmptyMSBuildFile);
        Write("Directory.Build.targets", ConsumerAppSource.EmptyMSBuildFile);
        Write("Directory.Packages.props", ConsumerAppSource.EmptyMSBuildFile);

        return await DotNetCli.RunAsync(
            Directory,
            ["build", "Consumer.csproj", "-c", "Release", "--disable-build-servers", "-tl:off"],
            BuildTimeout,
            Environment);
    }

    /// <summary>Starts the built app on a port the OS picks, and returns its address once it listens.</summary>
    public async Task<Uri> StartAsync()
    {
        string dll = Path.Combine(Directory, "bin", "Release", "net10.0", "Consumer.dll");
        _process = DotNetCli.Start(Directory, [dll, "--urls", "http://127.0.0.1:0"], Environment);
        var listening = _process.LineStartingWithAsync(ConsumerAppSource.ListeningLine);
        var finished = await Task.WhenAny(listening, Task.Delay(StartTimeout));
        Assert.True(finished == listening, $"The consumer app did not listen within {StartTimeout.TotalSeconds} s. Output:{System.Environment.NewLine}{Output}");
        string line;
        try
        {
            line = await listening;
        }
        catch (InvalidOperationException ex)
        {
            Assert.Fail($"{ex.Message} Output:{System.Environment.NewLine}{Output}");
            throw;
        }

        return new Uri(line[ConsumerAppSource.ListeningLine.Length..].Split(' ')[0]);
    }

    public void Dispose() => _process?.Dispose();

    private void Write(string file, string content) => File.WriteAllText(Path.Combine(Directory, file), content);
}
