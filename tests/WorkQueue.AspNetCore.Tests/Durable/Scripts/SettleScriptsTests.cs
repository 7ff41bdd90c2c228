using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Scripts;

/// <summary>
/// What the four settle scripts (scheduleRetry.lua, deadLetter.lua, settleCanceled.lua, release.lua) share, called
/// directly through their typed calls on a real redis-server: one theory each over all four, where each script's own
/// class holds what only it does.
/// </summary>
public sealed class SettleScriptsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const long Retention = 60_000;
    private const long Delay = 60_000;

    /// <summary>The settle scripts, by name: each settles one held entry and answers how many it settled (0 or 1).</summary>
    private static readonly Dictionary<string, Func<IDatabase, RedisStreamKeys, SettledEntry, long>> Scripts = new()
    {
        ["scheduleRetry"] = (db, keys, entry) => ScheduleRetryCall.Run(db, keys, ScriptState.Consumer, entry, Delay, "boom") ? 1 : 0,
        ["deadLetter"] = (db, keys, entry) => DeadLetterCall.Run(db, keys, ScriptState.Consumer, entry, "boom", "failed", Retention) ? 1 : 0,
        ["settleCanceled"] = (db, keys, entry) => SettleCanceledCall.Run(db, keys, ScriptState.Consumer, entry, Retention) ? 1 : 0,
        ["release"] = (db, keys, entry) => ReleaseCall.Run(db, keys, ScriptState.Consumer, [entry], Retention),
    };

    /// <summary>
    /// Ids no entry can have, each with whether the entry is taken for lost (<see cref="SettledEntry.Vanished"/>): range
    /// bounds XPENDING reads where XACK refuses them, text, an id without its sequence, a leading zero, a location's
    /// tail, numbers beyond Redis's grammar.
    /// </summary>
    private static readonly (string Id, bool AlreadyFound)[] IdsNoEntryCanHave =
    [
        ("-", false), ("-", true), ("+", true), ("(1-0", true), ("nope", false), ("", true), ("1", true), ("01-0", true),
        ("1-0|z5", false), ("99999999999999999999999-0", false), ("1-18446744073709551616", true),
    ];

    public static TheoryData<string> SettleScripts => [.. Scripts.Keys];

    public static TheoryData<string, string, bool> SettleScriptsAndIdsNoEntryCanHave
    {
        get
        {
            var data = new TheoryData<string, string, bool>();
            foreach (string script in Scripts.Keys)
            {
                foreach (var (id, alreadyFound) in IdsNoEntryCanHave)
                {
                    data.Add(script, id, alreadyFound);
                }
            }

            return data;
        }
    }

    /// <summary>
    /// An id no entry can have is nobody's: nothing settled, answered before any write. XPENDING reads '-', '+' and
    /// '(1-0' as range bounds where XACK refuses them, so such an id, with the entry taken for lost, once failed the
    /// XACK after the script's other writes (release.lua once failed the whole call after the entries before it were
    /// handed back; see ReleaseScriptTests for such an id among good entries).
    /// </summary>
    [Theory]
    [MemberData(nameof(SettleScriptsAndIdsNoEntryCanHave))]
    public async Task Settle_IdNoEntryCanHave_SettlesNothingWithoutWriting(string script, string id, bool alreadyFound)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var entry = await SettleState.HeldAsync(db, keys, "k") with { StreamId = id, Vanished = alreadyFound };
        string before = await ScriptState.SnapshotAsync(db, keys);

        var answer = Record.Exception(() => Assert.Equal(0, Scripts[script](db, keys, entry)));

        // What Redis holds first: an error must not hide a write made before it.
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
        Assert.Null(answer);
    }

    [Theory]
    [MemberData(nameof(SettleScripts))]
    public async Task Settle_StreamOfAnotherType_FailsWithoutWriting(string script)
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = ScriptState.NewQueue(db);
        var held = await SettleState.HeldAsync(db, keys, "k");
        await db.KeyDeleteAsync(keys.Stream);
        await db.StringSetAsync(keys.Stream, "not a stream");
        string before = await ScriptState.SnapshotAsync(db, keys);

        // release.lua takes a batch: given the entry twice, so the refusal of the second one's write cannot pass either.
        var error = Assert.Throws<RedisServerException>(() => script == "release"
            ? ReleaseCall.Run(db, keys, ScriptState.Consumer, [held, held], Retention)
            : Scripts[script](db, keys, held));
        Assert.Contains("WRONGTYPE", error.Message, StringComparison.Ordinal);
        Assert.Equal(before, await ScriptState.SnapshotAsync(db, keys));
    }
}
