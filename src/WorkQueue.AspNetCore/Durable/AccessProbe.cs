namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// One command a durable queue sends, as it sends it on its own keys and channels (<see cref="Command"/>), and the ACL
/// rules that let the connection's user run it (<see cref="Rules"/>: the command, and the channel pattern for a
/// publish or a subscribe); see <see cref="DurableAcl.Probes"/>.
/// </summary>
internal sealed record AccessProbe(string Rules, IReadOnlyList<string> Command)
{
    /// <summary>Gets the command's name as Redis documents it: <c>XGROUP CREATE</c> for <c>+xgroup|create</c>.</summary>
    public string Name => Rules.Split(' ')[0].TrimStart('+').Replace('|', ' ').ToUpperInvariant();
}
