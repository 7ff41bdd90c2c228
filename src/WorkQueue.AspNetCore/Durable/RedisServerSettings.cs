namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// What the startup checks read from a Redis server (<c>serverInfo.lua</c>): its version and the two settings that decide
/// whether a durable queue's jobs survive, and the risks they carry (<see cref="Risks"/>). A field Redis did not report
/// is <see langword="null"/> and not judged.
/// </summary>
internal sealed record RedisServerSettings(string? Version, string? MaxMemoryPolicy, string? MaxMemory, bool? AppendOnly)
{
    /// <summary>The oldest Redis the scripts run on: XSETID's ENTRIESADDED and MAXDELETEDID, XINFO's lag and max-deleted-entry-id, XAUTOCLAIM's deleted ids.</summary>
    public static readonly System.Version MinimumVersion = new(7, 0, 0);

    /// <summary>
    /// Reads the settings from INFO's text (<c>name:value</c> lines) and the version the script engine reported, which
    /// is preferred to INFO's (a proxy may rewrite INFO).
    /// </summary>
    public static RedisServerSettings Parse(string? scriptVersion, string info)
    {
        string? version = scriptVersion;
        string? policy = null;
        string? maxMemory = null;
        bool? appendOnly = null;
        foreach (var line in info.Split('\n'))
        {
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0)
            {
                continue;
            }

            string value = line[(colon + 1)..].TrimEnd('\r');
            switch (line[..colon])
            {
                case "redis_version":
                    version ??= value;
                    break;
                case "maxmemory_policy":
                    policy = value;
                    break;
                case "maxmemory":
                    maxMemory = value;
                    break;
                case "aof_enabled":
                    appendOnly = value == "1";
                    break;
            }
        }

        return new RedisServerSettings(version, policy, maxMemory, appendOnly);
    }

    /// <summary>Gets the risks these settings carry for a durable queue, each naming the setting and its value.</summary>
    public IReadOnlyList<ServerRisk> Risks()
    {
        var risks = new List<ServerRisk>();
        if (Version is not null && (!TryParseVersion(Version, out var version) || version < MinimumVersion))
        {
            risks.Add(new ServerRisk(
                "version",
                Version,
                "the durable queue's scripts need Redis 7.0 or later (XSETID with ENTRIESADDED and MAXDELETEDID, XINFO's lag and max-deleted-entry-id): on an older server some fail and others misreport the queue",
                "upgrade Redis to 7.0 or later"));
        }

        if (MaxMemoryPolicy is not null && MaxMemoryPolicy != "noeviction")
        {
            risks.Add(new ServerRisk(
                "maxmemory-policy",
                MaxMemoryPolicy,
                $"when Redis reaches maxmemory ({(MaxMemory is null or "0" ? "0, no limit now; a limit set later applies it" : MaxMemory + " bytes")}) it evicts keys to make room, and an evicted stream, retry set or job record loses jobs that EnqueueAsync acknowledged as stored",
                "set maxmemory-policy noeviction: a full Redis then refuses enqueues (they fail) instead of dropping jobs"));
        }

        if (AppendOnly == false)
        {
            risks.Add(new ServerRisk(
                "appendonly",
                "no",
                "Redis keeps the queue in memory only (and in RDB snapshots, when configured): a restart or a crash loses every job stored since the last snapshot, acknowledged ones too",
                "set appendonly yes (appendfsync everysec loses at most about a second of jobs on a crash of the host, always none)"));
        }

        return risks;
    }

    /// <summary>Reads a version as Redis writes it (<c>7.0.15</c>), ignoring a suffix a fork may add (<c>7.2.4-v1</c>).</summary>
    private static bool TryParseVersion(string text, out System.Version version)
    {
        int end = 0;
        while (end < text.Length && (char.IsAsciiDigit(text[end]) || text[end] == '.'))
        {
            end++;
        }

        if (!System.Version.TryParse(text.AsSpan(0, end), out var parsed))
        {
            version = new System.Version();
            return false;
        }

        // "7.0" is 7.0.0: a Version without a build compares below one with build 0.
        version = new System.Version(parsed.Major, parsed.Minor, Math.Max(parsed.Build, 0));
        return true;
    }
}
