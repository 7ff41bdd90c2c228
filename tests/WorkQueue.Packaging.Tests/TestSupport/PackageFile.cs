using System.IO.Compression;
using System.Xml.Linq;

namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>A <c>.nupkg</c> or <c>.snupkg</c> read as the zip it is: its entries and its nuspec.</summary>
internal sealed class PackageFile
{
    private readonly string _path;

    private PackageFile(string path, IReadOnlyList<string> entries, XElement metadata)
    {
        _path = path;
        Entries = entries;
        Metadata = metadata;
    }

    /// <summary>Gets the paths of the files inside the package.</summary>
    public IReadOnlyList<string> Entries { get; }

    /// <summary>Gets the nuspec's <c>metadata</c> element.</summary>
    public XElement Metadata { get; }

    public static PackageFile Open(string path)
    {
        Assert.True(File.Exists(path), $"The package {path} was not produced. The feed holds: {string.Join(", ", Directory.GetFiles(Path.GetDirectoryName(path)!).Select(Path.GetFileName))}.");
        using var zip = ZipFile.OpenRead(path);
        var entries = zip.Entries.Select(e => e.FullName).ToList();
        var nuspec = zip.Entries.Single(e => e.FullName.EndsWith(".nuspec", StringComparison.Ordinal) && !e.FullName.Contains('/'));
        using var stream = nuspec.Open();
        var metadata = XDocument.Load(stream).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
        return new PackageFile(path, entries, metadata);
    }

    /// <summary>Gets the value of a metadata element, or <see langword="null"/> when the nuspec does not have it.</summary>
    public string? Value(string element) => Element(element)?.Value;

    public XElement? Element(string element) => Metadata.Elements().FirstOrDefault(e => e.Name.LocalName == element);

    /// <summary>Gets the package dependencies of the group for <paramref name="targetFramework"/>, as (id, version range).</summary>
    public IReadOnlyList<(string Id, string Version)> Dependencies(string targetFramework) =>
        Group("dependencies", targetFramework)
            .Select(d => ((string)d.Attribute("id")!, (string)d.Attribute("version")!))
            .ToList();

    /// <summary>Gets the shared-framework references of the group for <paramref name="targetFramework"/>.</summary>
    public IReadOnlyList<string> FrameworkReferences(string targetFramework) =>
        Group("frameworkReferences", targetFramework).Select(f => (string)f.Attribute("name")!).ToList();

    /// <summary>Gets the target frameworks that have a dependency group.</summary>
    public IReadOnlyList<string> DependencyGroups() =>
        Groups("dependencies").Select(g => (string?)g.Attribute("targetFramework") ?? "(any)").ToList();

    public byte[] Read(string entry)
    {
        using var zip = ZipFile.OpenRead(_path);
        using var stream = zip.GetEntry(entry)!.Open();
        using var buffer = new MemoryStream();
        stream.CopyTo(buffer);
        return buffer.ToArray();
    }

    private IEnumerable<XElement> Groups(string section) =>
        Element(section)?.Elements().Where(e => e.Name.LocalName == "group") ?? [];

    private IEnumerable<XElement> Group(string section, string targetFramework) =>
        Groups(section)
            .Where(g => string.Equals((string?)g.Attribute("targetFramework"), targetFramework, StringComparison.OrdinalIgnoreCase))
            .SelectMany(g => g.Elements());
}
