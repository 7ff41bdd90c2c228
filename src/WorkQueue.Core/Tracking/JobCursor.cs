using System.Globalization;

namespace WorkQueue.Tracking;

/// <summary>
/// Where a job search continues: among the jobs in flight below an id (<c>l{id}</c>), or among the ended jobs before an
/// ending sequence number (<c>e{sequence}</c>). Both parts only go down, so a cursor stays valid while jobs come and go.
/// </summary>
internal readonly record struct JobCursor(bool Ended, long Before)
{
    public static JobCursor Start => new(Ended: false, long.MaxValue);

    public static JobCursor EndedStart => new(Ended: true, long.MaxValue);

    public static bool TryParse(string text, out JobCursor cursor)
    {
        cursor = default;
        if (text.Length < 2 || text[0] is not ('l' or 'e')
            || !long.TryParse(text.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture, out long before))
        {
            return false;
        }

        cursor = new JobCursor(text[0] == 'e', before);
        return true;
    }

    public override string ToString() => (Ended ? "e" : "l") + Before.ToString(CultureInfo.InvariantCulture);
}
