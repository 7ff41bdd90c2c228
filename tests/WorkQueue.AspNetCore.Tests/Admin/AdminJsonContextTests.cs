using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>
/// The admin routes in an app whose HTTP JSON options resolve only the app's own source-generated types, as in a
/// native AOT app (where reflection-based JSON is off): their responses and problems go through WorkQueue's own
/// generated contract, which mapping them adds to those options.
/// </summary>
public sealed partial class AdminJsonContextTests
{
    private const string Prefix = "/admin/workqueue";

    [Fact]
    public async Task AdminRoutes_AppJsonWithoutReflection_AnswerResultsAndProblems()
    {
        await using var app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue();
                b.Services.ConfigureHttpJsonOptions(o => o.SerializerOptions.TypeInfoResolver = AppJsonContext.Default);
            },
            app => app.MapWorkQueueAdmin(Prefix));

        using var all = await app.Client.GetAsync(Prefix);
        using var unknown = await app.Client.GetAsync($"{Prefix}/nope/depth");
        using var invalid = await app.Client.GetAsync($"{Prefix}/default/jobs?limit=0");

        string body = await all.Content.ReadAsStringAsync();
        Assert.True(all.StatusCode == HttpStatusCode.OK, $"GET {Prefix} answered {(int)all.StatusCode}: {body}");
        using (var json = JsonDocument.Parse(body))
        {
            Assert.Equal("default", json.RootElement[0].GetProperty("name").GetString());
        }

        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        using (var problem = JsonDocument.Parse(await unknown.Content.ReadAsStringAsync()))
        {
            Assert.Equal("Unknown queue", problem.RootElement.GetProperty("title").GetString());
        }

        Assert.Equal(HttpStatusCode.BadRequest, invalid.StatusCode);
        using (var problem = JsonDocument.Parse(await invalid.Content.ReadAsStringAsync()))
        {
            Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty("limit", out _));
        }
    }

    /// <summary>The app's own JSON contract: it knows nothing of WorkQueue's types.</summary>
    [JsonSerializable(typeof(int))]
    private sealed partial class AppJsonContext : JsonSerializerContext;
}
