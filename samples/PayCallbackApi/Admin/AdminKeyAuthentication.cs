using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Authentication;
using Microsoft.Extensions.Options;

namespace PayCallbackApi.Admin;

/// <summary>
/// <c>X-Admin-Key</c> authentication for the admin endpoints: no header is a 401 (challenge), a wrong key is a 403
/// (authenticated but not authorized), the right key passes.
/// </summary>
internal sealed class AdminKeyAuthentication(IOptionsMonitor<AuthenticationSchemeOptions> options, ILoggerFactory logger, UrlEncoder encoder, IConfiguration configuration)
    : AuthenticationHandler<AuthenticationSchemeOptions>(options, logger, encoder)
{
    public const string SchemeName = "AdminKey";
    public const string Policy = "WorkQueueAdmin";
    public const string Header = "X-Admin-Key";
    public const string ConfigKey = "Admin:ApiKey";
    private const string ValidClaim = "admin_key_valid";

    public static void AddPolicy(Microsoft.AspNetCore.Authorization.AuthorizationOptions options) =>
        options.AddPolicy(Policy, p => p.AddAuthenticationSchemes(SchemeName).RequireClaim(ValidClaim, "true"));

    protected override Task<AuthenticateResult> HandleAuthenticateAsync()
    {
        if (!Request.Headers.TryGetValue(Header, out var given) || string.IsNullOrEmpty(given))
        {
            return Task.FromResult(AuthenticateResult.NoResult());
        }

        var expected = Encoding.UTF8.GetBytes(configuration[ConfigKey] ?? "");
        bool valid = expected.Length > 0 && CryptographicOperations.FixedTimeEquals(expected, Encoding.UTF8.GetBytes(given.ToString()));
        var identity = new ClaimsIdentity([new Claim(ValidClaim, valid ? "true" : "false")], SchemeName);
        return Task.FromResult(AuthenticateResult.Success(new AuthenticationTicket(new ClaimsPrincipal(identity), SchemeName)));
    }
}
