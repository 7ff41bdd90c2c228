using System.Reflection;
using System.Text.RegularExpressions;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

public sealed class DurableScriptLoaderTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Root = "Durable/Scripts/";

    /// <summary>Every script embedded in the assembly (not the includes), by its name as <see cref="DurableScriptLoader.Load"/> takes it.</summary>
    public static TheoryData<string> Scripts()
    {
        var data = new TheoryData<string>();
        foreach (var name in Resources().Where(r => !r.StartsWith(Root + "includes/", StringComparison.Ordinal)))
        {
            data.Add(name[Root.Length..^".lua".Length]);
        }

        return data;
    }

    [Fact]
    public void DurableScripts_EveryField_IsAnEmbeddedScript()
    {
        var fields = typeof(DurableScripts).GetFields(BindingFlags.Public | BindingFlags.Static);
        var scripts = Scripts().Select(row => row.Data).ToHashSet();

        Assert.NotEmpty(fields);
        foreach (var field in fields)
        {
            Assert.Contains(char.ToLowerInvariant(field.Name[0]) + field.Name[1..], scripts);
            Assert.False(string.IsNullOrWhiteSpace((string?)field.GetValue(null)), field.Name);
        }
    }

    [Theory]
    [MemberData(nameof(Scripts))]
    public void Load_Script_ExpandsEveryIncludeOnce(string name)
    {
        var text = DurableScriptLoader.Load(name);

        Assert.DoesNotContain("--- @include", text);
        var functions = Regex.Matches(text, @"^\s*local function (\w+)", RegexOptions.Multiline).Select(m => m.Groups[1].Value).ToList();
        Assert.Equal(functions.Distinct(), functions);
    }

    [Theory]
    [MemberData(nameof(Scripts))]
    public void Script_Header_SaysWhatItDoesWithItsKeys(string name)
    {
        var header = Header(Root + name + ".lua");

        Assert.Contains("KEYS", header);
        Assert.Contains("Returns", header, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void Include_EveryFile_IsHeadedAndUsed()
    {
        var includes = Resources().Where(r => r.StartsWith(Root + "includes/", StringComparison.Ordinal)).ToList();
        var used = new HashSet<string>(StringComparer.Ordinal);
        foreach (var row in Scripts())
        {
            DurableScriptLoader.Load(row.Data, used);
        }

        Assert.NotEmpty(includes);
        foreach (var include in includes)
        {
            Assert.NotEqual("", Header(include));
            Assert.Contains(include, used);
        }
    }

    [Theory]
    [MemberData(nameof(Scripts))]
    public async Task ScriptLoad_Script_CompilesOnRedis(string name)
    {
        await using var connection = await ConnectionMultiplexer.ConnectAsync(redis.Server.Configuration);
        var server = connection.GetServer(connection.GetEndPoints()[0]);

        // SCRIPT LOAD compiles the script without running it: a syntax error is refused here, not in the middle of a round.
        var sha = await server.ScriptLoadAsync(DurableScriptLoader.Load(name));

        Assert.Equal(20, sha.Length);
    }

    [Fact]
    public void Load_UnknownScript_ThrowsNamingIt()
    {
        var error = Assert.Throws<InvalidOperationException>(() => DurableScriptLoader.Load("noSuchScript"));

        Assert.Contains("Durable/Scripts/noSuchScript.lua", error.Message);
    }

    private static IEnumerable<string> Resources() =>
        typeof(DurableScripts).Assembly.GetManifestResourceNames().Where(r => r.StartsWith(Root, StringComparison.Ordinal) && r.EndsWith(".lua", StringComparison.Ordinal)).Order(StringComparer.Ordinal);

    private static string Read(string resource)
    {
        using var stream = typeof(DurableScripts).Assembly.GetManifestResourceStream(resource)!;
        using var reader = new StreamReader(stream);
        return reader.ReadToEnd();
    }

    // The comment lines a file opens with, before its first include or code.
    private static string Header(string resource) =>
        string.Join('\n', Read(resource).Split('\n').TakeWhile(l => l.StartsWith("--", StringComparison.Ordinal) && !l.StartsWith("--- @include", StringComparison.Ordinal)));
}
