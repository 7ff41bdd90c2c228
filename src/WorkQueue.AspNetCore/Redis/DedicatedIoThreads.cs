using System.Diagnostics.CodeAnalysis;
using System.Net;
using System.Reflection;
using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// StackExchange.Redis's process-wide <c>DedicatedThreads</c> feature flag (3.1.31 and later): asking for it, and
/// finding out what each connection actually got.
/// </summary>
internal static class DedicatedIoThreads
{
    /// <summary>The flag's name, as <see cref="ConnectionMultiplexer.SetFeatureFlag"/> knows it.</summary>
    public const string FeatureFlag = "DedicatedThreads";

    // The flag is a request that each connection reads when it is made; what a connection actually got is answered by
    // the library's IInternalConnectionMultiplexer.IsSyncReader/IsSyncWriter, which it keeps "for tests and
    // diagnostics" but does not make public. Looked up once; null when a future version renames or drops them. The
    // interface is named by a constant and kept with its public methods (the annotation), so the lookups also work in a
    // trimmed or native AOT app.
    [DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicMethods)]
    private static readonly Type? InternalMultiplexer = Type.GetType("StackExchange.Redis.IInternalConnectionMultiplexer, StackExchange.Redis");
    private static readonly MethodInfo? IsSyncReader = FindDiagnostic("IsSyncReader");
    private static readonly MethodInfo? IsSyncWriter = FindDiagnostic("IsSyncWriter");

    /// <summary>Gets whether the flag is on in this process now.</summary>
    public static bool IsEnabled => ConnectionMultiplexer.GetFeatureFlag(FeatureFlag);

    /// <summary>Gets the installed StackExchange.Redis's version, for messages.</summary>
    public static string LibraryVersion =>
        typeof(ConnectionMultiplexer).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
        ?? typeof(ConnectionMultiplexer).Assembly.GetName().Version?.ToString()
        ?? "?";

    /// <summary>
    /// Turns the flag on for every connection made from now on, in the whole process; returns whether it is on
    /// afterwards (<see cref="ConnectionMultiplexer.SetFeatureFlag"/> silently ignores a name it does not know).
    /// </summary>
    public static bool Enable()
    {
        ConnectionMultiplexer.SetFeatureFlag(FeatureFlag, true);
        return IsEnabled;
    }

    /// <summary>
    /// Finds which threads serve the interactive connection of every connected endpoint (one not connected now is
    /// skipped): <see cref="RedisIoThreads.Unverified"/> when the library cannot say, or none is connected.
    /// </summary>
    public static RedisIoThreads Inspect(IConnectionMultiplexer multiplexer, IReadOnlyCollection<EndPoint> endpoints)
    {
        if (IsSyncReader is null || IsSyncWriter is null || endpoints.Count == 0)
        {
            return RedisIoThreads.Unverified;
        }

        int dedicated = 0;
        int pooled = 0;
        foreach (var endpoint in endpoints)
        {
            if (!multiplexer.GetServer(endpoint).IsConnected)
            {
                // Lost since it answered (a primary killed during a failover), or reconnecting: it has no connection to
                // report on, or one whose threads are not started yet. Not a connection on the thread pool; the next
                // connection is made under the same process-wide flag.
                continue;
            }

            object[] arguments = [endpoint, ConnectionType.Interactive];
            if (IsSyncReader.Invoke(multiplexer, arguments) is not bool reader || IsSyncWriter.Invoke(multiplexer, arguments) is not bool writer)
            {
                return RedisIoThreads.Unverified;
            }

            if (reader && writer)
            {
                dedicated++;
            }
            else
            {
                pooled++;
            }
        }

        return (dedicated, pooled) switch
        {
            (0, 0) => RedisIoThreads.Unverified,
            (_, 0) => RedisIoThreads.Dedicated,
            (0, _) => RedisIoThreads.ThreadPool,
            _ => RedisIoThreads.Mixed,
        };
    }

    private static MethodInfo? FindDiagnostic(string name)
    {
        var method = InternalMultiplexer?.GetMethod(name, [typeof(EndPoint), typeof(ConnectionType)]);
        return method?.ReturnType == typeof(bool?) && method.DeclaringType!.IsAssignableFrom(typeof(ConnectionMultiplexer)) ? method : null;
    }
}
