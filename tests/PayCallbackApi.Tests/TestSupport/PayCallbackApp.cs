using System.Net.Http.Json;
using System.Text;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.Extensions.DependencyInjection;
using PayCallbackApi.Callbacks;
using StackExchange.Redis;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>The real PayCallbackApi on real Kestrel (127.0.0.1, free port), against a real redis-server.</summary>
internal sealed class PayCallbackApp : WebApplicationFactory<Program>
{
    public const string SigningKey = "test-signing-key-0123456789";
    private readonly Dictionary<string, string?> _settings;

    public PayCallbackApp(RedisServer redis, ProcessingMode mode, Dictionary<string, string?>? settings = null)
    {
        Redis = redis;
        _settings = new Dictionary<string, string?>
        {
            ["ConnectionStrings:Redis"] = redis.Configuration,
            ["PayCallback:SigningKey"] = SigningKey,
            ["PayCallback:Mode"] = mode.ToString(),
            ["PayCallback:ProviderLatencyMs"] = "5",
        };
        foreach (var (key, value) in settings ?? [])
        {
            _settings[key] = value;
        }

        UseKestrel(0);
    }

    public RedisServer Redis { get; }

    /// <summary>Gets or sets registrations added after the app's own (a test's exporter, a test-only middleware).</summary>
    public Action<IServiceCollection>? ConfigureTestServices { get; init; }

    public static string Body(string orderId, string paymentId, string amount = "99.50", string status = "SUCCESS") =>
        $$"""{"orderId":"{{orderId}}","paymentId":"{{paymentId}}","amount":{{amount}},"currency":"CNY","status":"{{status}}","paidAt":"2026-11-21T10:00:00Z"}""";

    public static HttpRequestMessage SignedCallback(string body, string? signature = null)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, "/api/pay/callback")
        {
            Content = new StringContent(body, Encoding.UTF8, "application/json"),
        };
        request.Headers.Add(SignatureVerifier.Header, signature ?? SignatureVerifier.Sign(Encoding.UTF8.GetBytes(SigningKey), Encoding.UTF8.GetBytes(body)));
        return request;
    }

    public async Task<long> CounterAsync(string key)
    {
        using var mux = await ConnectionMultiplexer.ConnectAsync(Redis.Configuration);
        var value = await mux.GetDatabase().StringGetAsync(key);
        return value.IsNull ? 0 : (long)value;
    }

    /// <summary>A hash field read as a number (0 when absent).</summary>
    public async Task<long> CounterAsync(string key, string field)
    {
        using var mux = await ConnectionMultiplexer.ConnectAsync(Redis.Configuration);
        var value = await mux.GetDatabase().HashGetAsync(key, field);
        return value.IsNull ? 0 : (long)value;
    }

    public async Task WaitForEffectsAsync(HttpClient client, string orderId)
    {
        await Wait.UntilAsync(
            () =>
            {
                var view = client.GetFromJsonAsync<OrderView>($"/api/orders/{orderId}").GetAwaiter().GetResult();
                return view is not null && view.Effects.Values.All(done => done);
            },
            $"every effect of order {orderId} is done");
    }

    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        foreach (var (key, value) in _settings)
        {
            builder.UseSetting(key, value);
        }

        if (ConfigureTestServices is not null)
        {
            builder.ConfigureServices(ConfigureTestServices);
        }
    }

    internal sealed record OrderView(string OrderId, string Status, Dictionary<string, bool> Effects);
}
