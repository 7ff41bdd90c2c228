using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;

namespace PayCallbackApi.Tests.TestSupport;

/// <summary>
/// Requests with <see cref="Header"/> pretend to come from that address, so the loopback-only rule can be tested against
/// a non-loopback client without sending traffic anywhere but loopback. Runs ahead of the whole app pipeline.
/// </summary>
internal sealed class RemoteIpOverride : IStartupFilter
{
    public const string Header = "X-Test-Remote-Ip";

    public static void Register(IServiceCollection services) => services.AddSingleton<IStartupFilter, RemoteIpOverride>();

    public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
    {
        app.Use((context, nextMiddleware) =>
        {
            if (context.Request.Headers.TryGetValue(Header, out var ip))
            {
                context.Connection.RemoteIpAddress = IPAddress.Parse(ip.ToString());
            }

            return nextMiddleware(context);
        });
        next(app);
    };
}
