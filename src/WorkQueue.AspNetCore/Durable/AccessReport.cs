namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// What the access check (<see cref="DurableAccess"/>) found for one queue: the commands the connection's user may not
/// run and the ACL rules that would let it, or Redis's refusal of the check itself (its keys, or <c>EVAL</c>).
/// </summary>
/// <param name="Refused">The commands refused, by name (<c>XACK</c>, <c>XGROUP CREATE</c>), each once.</param>
/// <param name="MissingRules">The ACL rules that would allow them (<c>+xack</c>, <c>~workqueue:*</c>), each once.</param>
/// <param name="Error">Redis's refusal of the check's own script, or <see langword="null"/>.</param>
/// <param name="Checked"><see langword="false"/> when Redis could not tell (before 7.0, no <c>redis.acl_check_cmd</c>).</param>
internal sealed record AccessReport(IReadOnlyList<string> Refused, IReadOnlyList<string> MissingRules, string? Error, bool Checked)
{
    /// <summary>The report of a server that cannot tell: nothing is known to be refused.</summary>
    public static readonly AccessReport Unchecked = new([], [], null, Checked: false);

    /// <summary>Gets a value indicating whether the user may run everything the queue sends (or Redis could not tell).</summary>
    public bool Allowed => Refused.Count == 0 && MissingRules.Count == 0 && Error is null;

    /// <summary>
    /// Says what the user may not do and the ACL to add, then the whole ACL a durable queue needs under
    /// <paramref name="prefix"/>, for <paramref name="user"/> to copy.
    /// </summary>
    public string Explain(string user, string prefix)
    {
        string what = this switch
        {
            { Refused.Count: > 0 } => $"may not run {string.Join(", ", Refused)}",
            { Error: not null } when MissingRules.Any(static r => r.StartsWith('~')) => $"may not reach the queue's keys ({Error})",
            { Error: not null } => $"was refused a command ({Error})",
            { Checked: false } => "was refused a command (which one, Redis could not tell)",
            _ => "was refused a command that the access check finds allowed (one it does not ask about, or an ACL changed since)",
        };
        string add = MissingRules.Count > 0 ? $" Add {(Refused.Count > 1 ? "them" : "it")}: ACL SETUSER {user} {string.Join(' ', MissingRules)}." : string.Empty;
        return $"Redis user '{user}' {what}.{add} The whole ACL a durable queue needs " +
            $"(docs/durable.md, 'Running on production Redis'): ACL SETUSER {user} on >{{password}} {DurableAcl.Rules(prefix)}";
    }
}
