using System.Xml.Linq;

namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>
/// Packs WorkQueue.Core, WorkQueue.AspNetCore and WorkQueue.Testing with <c>dotnet pack -c Release</c>, under a version no NuGet cache can
/// hold (<c>{VersionPrefix}-test.{timestamp}</c>), into a temporary folder feed. The build goes to its own artifacts
/// folder, so the solution's bin/ and obj/ are left alone.
/// </summary>
public sealed class PackagedFeed : IAsyncLifetime
{
    internal static readonly TimeSpan PackTimeout = TimeSpan.FromMinutes(3);

    internal static readonly string[] PackageIds = ["WorkQueue.AspNetCore", "WorkQueue.Core", "WorkQueue.Testing"];

    public PackagedFeed()
    {
        RepositoryRoot = FindRepositoryRoot();
        var props = XDocument.Load(Path.Combine(RepositoryRoot, "Directory.Build.props"));
        VersionPrefix = Property(props, "VersionPrefix");
        RepositoryUrl = Property(props, "RepositoryUrl");
        Authors = Property(props, "Authors");
        string suffix = $"test.{DateTime.UtcNow:yyyyMMddHHmmss}.{Random.Shared.Next(1000, 10_000)}";
        Version = $"{VersionPrefix}-{suffix}";
        VersionSuffix = suffix;
        WorkDirectory = Path.Combine(Path.GetTempPath(), $"workqueue-packaging-{Guid.NewGuid():N}");
        FeedDirectory = Path.Combine(WorkDirectory, "feed");
    }

    /// <summary>Gets the folder that holds WorkQueue.sln.</summary>
    internal string RepositoryRoot { get; }

    /// <summary>Gets the version prefix set in the repository's Directory.Build.props, the one place it lives.</summary>
    internal string VersionPrefix { get; }

    internal string VersionSuffix { get; }

    /// <summary>Gets the version the packages were packed with.</summary>
    internal string Version { get; }

    internal string RepositoryUrl { get; }

    internal string Authors { get; }

    /// <summary>Gets the temporary folder everything goes in (feed, build artifacts, consumer app); deleted at the end.</summary>
    internal string WorkDirectory { get; }

    internal string FeedDirectory { get; }

    internal List<CommandResult> PackCommands { get; } = [];

    public async ValueTask InitializeAsync()
    {
        Directory.CreateDirectory(FeedDirectory);
        foreach (var id in PackageIds)
        {
            var pack = await DotNetCli.RunAsync(
                RepositoryRoot,
                [
                    "pack", Path.Combine(RepositoryRoot, "src", id, $"{id}.csproj"),
                    "-c", "Release",
                    "-o", FeedDirectory,
                    "--artifacts-path", Path.Combine(WorkDirectory, "artifacts"),
                    $"-p:VersionSuffix={VersionSuffix}",
                    "--disable-build-servers",
                    "-tl:off",
                ],
                PackTimeout);
            PackCommands.Add(pack);
            pack.EnsureSucceeded($"Packing {id}");
        }
    }

    public ValueTask DisposeAsync()
    {
        try
        {
            Directory.Delete(WorkDirectory, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a temp folder left behind is not a test failure.
        }
        catch (UnauthorizedAccessException)
        {
        }

        return ValueTask.CompletedTask;
    }

    /// <summary>Opens the <c>.nupkg</c> of <paramref name="id"/>.</summary>
    internal PackageFile Package(string id) => PackageFile.Open(PackagePath(id, "nupkg"));

    /// <summary>Opens the <c>.snupkg</c> of <paramref name="id"/>.</summary>
    internal PackageFile SymbolPackage(string id) => PackageFile.Open(PackagePath(id, "snupkg"));

    internal string PackagePath(string id, string extension) => Path.Combine(FeedDirectory, $"{id}.{Version}.{extension}");

    internal static string FindRepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "WorkQueue.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No folder above {AppContext.BaseDirectory} holds WorkQueue.sln.");
    }

    private static string Property(XDocument props, string name) =>
        props.Descendants(name).Select(e => e.Value.Trim()).FirstOrDefault(v => v.Length > 0)
        ?? throw new InvalidOperationException($"Directory.Build.props sets no {name}.");
}
