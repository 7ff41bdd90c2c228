using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using WorkQueue.Packaging.Tests.TestSupport;

namespace WorkQueue.Packaging.Tests;

/// <summary>What <c>dotnet pack -c Release</c> puts in the packages: metadata, dependencies, assets, symbols.</summary>
[Collection(PackagesCollection.Name)]
public sealed partial class PackageContentsTests
{
    private const string Tfm = "net10.0";

    private readonly PackagedFeed _feed;

    public PackageContentsTests(PackagedFeed feed)
    {
        _feed = feed;
    }

    [Fact]
    public void Pack_BothProjects_ProducePackagesAndSymbolPackagesWithoutWarnings()
    {
        foreach (var pack in _feed.PackCommands)
        {
            var warnings = WarningLine().Matches(pack.Output).Select(m => m.Value.Trim()).ToList();
            Assert.True(warnings.Count == 0, $"Packing printed warnings:{Environment.NewLine}{string.Join(Environment.NewLine, warnings)}{Environment.NewLine}{pack.Describe()}");
        }

        var expected = PackagedFeed.PackageIds
            .SelectMany(id => new[] { $"{id}.{_feed.Version}.nupkg", $"{id}.{_feed.Version}.snupkg" })
            .Order();
        var produced = Directory.GetFiles(_feed.FeedDirectory).Select(Path.GetFileName).Order();
        Assert.Equal(expected, produced);
    }

    [Theory]
    [InlineData("WorkQueue.Core")]
    [InlineData("WorkQueue.AspNetCore")]
    [InlineData("WorkQueue.Testing")]
    public void Pack_Package_HasCompleteMetadata(string id)
    {
        var package = _feed.Package(id);

        Assert.Equal(id, package.Value("id"));
        Assert.Equal(_feed.Version, package.Value("version"));
        Assert.StartsWith(_feed.VersionPrefix + "-", package.Value("version"));
        Assert.Equal(_feed.Authors, package.Value("authors"));
        Assert.False(string.IsNullOrWhiteSpace(package.Value("description")), "The package has no description.");
        Assert.False(string.IsNullOrWhiteSpace(package.Value("tags")), "The package has no tags.");
        Assert.False(string.IsNullOrWhiteSpace(package.Value("copyright")), "The package has no copyright.");

        var license = package.Element("license");
        Assert.NotNull(license);
        Assert.Equal("expression", (string?)license.Attribute("type"));
        Assert.Equal("MIT", license.Value);

        var repository = package.Element("repository");
        Assert.NotNull(repository);
        Assert.Equal("git", (string?)repository.Attribute("type"));
        Assert.Equal(_feed.RepositoryUrl, (string?)repository.Attribute("url"));
        Assert.Equal(_feed.RepositoryUrl, package.Value("projectUrl"));

        Assert.Equal("README.md", package.Value("readme"));
    }

    [Theory]
    [InlineData("WorkQueue.Core")]
    [InlineData("WorkQueue.AspNetCore")]
    [InlineData("WorkQueue.Testing")]
    public void Pack_Package_ContainsAssemblyXmlDocsAndReadme(string id)
    {
        var package = _feed.Package(id);

        Assert.Contains($"lib/{Tfm}/{id}.dll", package.Entries);
        Assert.Contains($"lib/{Tfm}/{id}.xml", package.Entries);
        Assert.Contains("README.md", package.Entries);

        var docs = XDocument.Parse(Encoding.UTF8.GetString(package.Read($"lib/{Tfm}/{id}.xml")));
        Assert.Equal(id, docs.Root?.Element("assembly")?.Element("name")?.Value);
        Assert.True(docs.Descendants("member").Count() > 10, $"The XML docs of {id} document almost nothing.");

        string readme = Encoding.UTF8.GetString(package.Read("README.md"));
        Assert.StartsWith($"# {id}", readme.TrimStart('\uFEFF'));
    }

    [Theory]
    [InlineData("WorkQueue.Core")]
    [InlineData("WorkQueue.AspNetCore")]
    [InlineData("WorkQueue.Testing")]
    public void Pack_Package_AssemblyIsDeterministic(string id)
    {
        using var pe = new PEReader(new MemoryStream(_feed.Package(id).Read($"lib/{Tfm}/{id}.dll")));

        var debugEntries = pe.ReadDebugDirectory().Select(e => e.Type).ToList();
        Assert.Contains(DebugDirectoryEntryType.Reproducible, debugEntries);
    }

    [Theory]
    [InlineData("WorkQueue.Core")]
    [InlineData("WorkQueue.AspNetCore")]
    [InlineData("WorkQueue.Testing")]
    public void Pack_SymbolPackage_ContainsPortablePdb(string id)
    {
        var symbols = _feed.SymbolPackage(id);

        Assert.Equal(id, symbols.Value("id"));
        Assert.Equal(_feed.Version, symbols.Value("version"));
        byte[] pdb = symbols.Read($"lib/{Tfm}/{id}.pdb");
        Assert.Equal("BSJB"u8.ToArray(), pdb.Take(4).ToArray()); // the portable PDB signature
    }

    [Theory]
    [InlineData("WorkQueue.Core")]
    [InlineData("WorkQueue.AspNetCore")]
    [InlineData("WorkQueue.Testing")]
    public void Pack_SymbolPackage_PdbHasSourceLinkToTheRepositoryAtThePackedCommit(string id)
    {
        var package = _feed.Package(id);
        string? commit = (string?)package.Element("repository")?.Attribute("commit");
        Assert.True(commit is { Length: 40 } && commit.All(char.IsAsciiHexDigitLower), $"The package's repository element has no commit: '{commit}'.");

        using var pdb = MetadataReaderProvider.FromPortablePdbStream(new MemoryStream(_feed.SymbolPackage(id).Read($"lib/{Tfm}/{id}.pdb")));
        var reader = pdb.GetMetadataReader();
        var sourceLink = reader.CustomDebugInformation
            .Select(reader.GetCustomDebugInformation)
            .Where(info => reader.GetGuid(info.Kind) == SourceLinkKind)
            .Select(info => reader.GetBlobBytes(info.Value))
            .SingleOrDefault();
        Assert.True(sourceLink is not null, $"The PDB of {id} has no Source Link.");

        using var json = JsonDocument.Parse(sourceLink);
        var url = Assert.Single(json.RootElement.GetProperty("documents").EnumerateObject()).Value.GetString();
        // The clone's GitHub remote, or RepositoryUrl when it has none (src/Directory.Build.targets); at the packed commit.
        Assert.Matches($@"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/{commit}/\*$", url);
    }

    [Fact]
    public void Pack_AspNetCore_DependsOnCoreAndRedisAndReferencesTheAspNetCoreFramework()
    {
        var package = _feed.Package("WorkQueue.AspNetCore");

        Assert.Equal([Tfm], package.DependencyGroups());
        var dependencies = package.Dependencies(Tfm).ToDictionary(d => d.Id, d => d.Version);
        Assert.True(dependencies.TryGetValue("WorkQueue.Core", out var core), $"No WorkQueue.Core dependency in: {Describe(dependencies)}.");
        Assert.Equal(_feed.Version, core);
        Assert.True(dependencies.TryGetValue("StackExchange.Redis", out var redis), $"No StackExchange.Redis dependency in: {Describe(dependencies)}.");
        Assert.Equal("3.4.35", redis);
        Assert.DoesNotContain(dependencies.Keys, d => d.StartsWith("Microsoft.AspNetCore", StringComparison.OrdinalIgnoreCase));

        Assert.Equal(["Microsoft.AspNetCore.App"], package.FrameworkReferences(Tfm));
    }

    [Fact]
    public void Pack_Core_DependsOnMicrosoftExtensionsAndCronosOnly()
    {
        var package = _feed.Package("WorkQueue.Core");

        Assert.Equal([Tfm], package.DependencyGroups());
        var dependencies = package.Dependencies(Tfm);
        Assert.NotEmpty(dependencies);

        // Cronos reads the recurring jobs' cron expressions (time zones, daylight saving), as Hangfire's does.
        Assert.Contains(dependencies, d => d.Id == "Cronos");
        Assert.All(dependencies, d => Assert.True(d.Id.StartsWith("Microsoft.Extensions.", StringComparison.Ordinal) || d.Id == "Cronos", $"Unexpected dependency {d.Id}."));
        Assert.Empty(package.FrameworkReferences(Tfm));
    }

    [Fact]
    public void Pack_Testing_DependsOnCoreOfTheSameVersionAndTheFakeClockOnly()
    {
        var package = _feed.Package("WorkQueue.Testing");

        Assert.Equal([Tfm], package.DependencyGroups());
        var dependencies = package.Dependencies(Tfm).ToDictionary(d => d.Id, d => d.Version);
        Assert.True(dependencies.TryGetValue("WorkQueue.Core", out var core), $"No WorkQueue.Core dependency in: {Describe(dependencies)}.");
        Assert.Equal(_feed.Version, core);
        Assert.True(dependencies.TryGetValue("Microsoft.Extensions.TimeProvider.Testing", out var fake), $"No TimeProvider.Testing dependency in: {Describe(dependencies)}.");
        Assert.Equal("10.11.0", fake);
        Assert.Equal(2, dependencies.Count);
        Assert.Empty(package.FrameworkReferences(Tfm));
    }

    // The kind of the PDB's custom debug information that holds the Source Link JSON (Portable PDB spec).
    private static readonly Guid SourceLinkKind = new("CC110556-A091-4D38-9FEC-25AB9A351A6A");

    private static string Describe(Dictionary<string, string> dependencies) =>
        string.Join(", ", dependencies.Select(d => $"{d.Key} {d.Value}"));

    // MSBuild's "file(line,col): warning CODE: message" and "project : warning CODE: message".
    [GeneratedRegex(@"^.*:\s+warning\s+[A-Za-z]*\d*\s*:.*$", RegexOptions.Multiline)]
    private static partial Regex WarningLine();
}
