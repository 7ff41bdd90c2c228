using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Options;

namespace PayCallbackApi.Callbacks;

/// <summary>Checks <c>X-Signature: sha256=&lt;lowercase hex HMAC-SHA256 of the raw body&gt;</c>.</summary>
internal sealed class SignatureVerifier
{
    public const string Header = "X-Signature";
    private const string Prefix = "sha256=";
    private readonly byte[] _key;

    public SignatureVerifier(IOptions<PayCallbackOptions> options)
    {
        _key = Encoding.UTF8.GetBytes(options.Value.SigningKey);
    }

    public static string Sign(byte[] key, ReadOnlySpan<byte> body) => Prefix + Convert.ToHexStringLower(HMACSHA256.HashData(key, body));

    public bool IsValid(string? header, ReadOnlySpan<byte> body)
    {
        if (header is null || !header.StartsWith(Prefix, StringComparison.Ordinal) || header.Length != Prefix.Length + 64)
        {
            return false;
        }

        Span<byte> expected = stackalloc byte[32];
        HMACSHA256.HashData(_key, body, expected);
        Span<byte> given = stackalloc byte[32];
        try
        {
            if (Convert.FromHexString(header.AsSpan(Prefix.Length), given, out _, out int written) != System.Buffers.OperationStatus.Done || written != 32)
            {
                return false;
            }
        }
        catch (FormatException)
        {
            return false;
        }

        return CryptographicOperations.FixedTimeEquals(expected, given);
    }
}
