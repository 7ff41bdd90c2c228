using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// A private certificate authority and a server certificate it signed for <c>localhost</c> and <c>127.0.0.1</c>, made
/// with .NET's <see cref="CertificateRequest"/> (no openssl), written as PEM files for redis-server's <c>tls-*</c>
/// settings: what a team running Redis with TLS behind its own CA has.
/// </summary>
internal sealed class TestCertificates : IDisposable
{
    private static readonly Oid ServerAuthentication = new("1.3.6.1.5.5.7.3.1");

    private TestCertificates(X509Certificate2 authority, string directory)
    {
        Authority = authority;
        CertificateFile = Path.Combine(directory, "redis.crt");
        KeyFile = Path.Combine(directory, "redis.key");
        AuthorityFile = Path.Combine(directory, "ca.crt");
    }

    /// <summary>Gets the authority's certificate (no private key), for a client to trust.</summary>
    public X509Certificate2 Authority { get; }

    public string CertificateFile { get; }

    public string KeyFile { get; }

    public string AuthorityFile { get; }

    /// <summary>Gets the redis-server arguments that serve TLS on <paramref name="tlsPort"/> with these files (clients need no certificate).</summary>
    public string[] ServerArguments(int tlsPort) =>
        ["--tls-port", tlsPort.ToString(System.Globalization.CultureInfo.InvariantCulture), "--tls-cert-file", CertificateFile, "--tls-key-file", KeyFile, "--tls-ca-cert-file", AuthorityFile, "--tls-auth-clients", "no"];

    /// <summary>Makes the authority and the server certificate, valid from a few minutes ago for a day, and writes them into <paramref name="directory"/>.</summary>
    public static TestCertificates Create(string directory)
    {
        var now = DateTimeOffset.UtcNow;
        using var authorityKey = RSA.Create(2048);
        var authorityRequest = new CertificateRequest("CN=WorkQueue test CA", authorityKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        authorityRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        authorityRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        authorityRequest.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(authorityRequest.PublicKey, critical: false));
        using var authority = authorityRequest.CreateSelfSigned(now.AddMinutes(-5), now.AddDays(1));

        using var serverKey = RSA.Create(2048);
        var serverRequest = new CertificateRequest("CN=localhost", serverKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        serverRequest.CertificateExtensions.Add(names.Build());
        serverRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: false));
        serverRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, critical: true));
        serverRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([ServerAuthentication], critical: false));
        serverRequest.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(authority, true, false));
        using var server = serverRequest.Create(authority, now.AddMinutes(-5), now.AddDays(1), RandomNumberGenerator.GetBytes(16));

        var certificates = new TestCertificates(X509CertificateLoader.LoadCertificate(authority.RawData), directory);
        File.WriteAllText(certificates.CertificateFile, server.ExportCertificatePem());
        File.WriteAllText(certificates.KeyFile, serverKey.ExportPkcs8PrivateKeyPem());
        File.WriteAllText(certificates.AuthorityFile, authority.ExportCertificatePem());
        return certificates;
    }

    public void Dispose() => Authority.Dispose();
}
