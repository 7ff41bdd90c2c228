namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>The tests that share one <see cref="PackagedFeed"/>: packing is done once, for all of them.</summary>
[CollectionDefinition(Name)]
public sealed class PackagesCollection : ICollectionFixture<PackagedFeed>
{
    public const string Name = "Packages";
}
