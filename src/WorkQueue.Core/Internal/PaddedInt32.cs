using System.Runtime.InteropServices;

namespace WorkQueue.Internal;

/// <summary>
/// A flag or counter on a cache line of its own (see <see cref="PaddedInt64"/>): read on every enqueue, written rarely,
/// kept away from the fields the workers write on every job.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = 128)]
internal struct PaddedInt32
{
    [FieldOffset(64)]
    public int Value;
}
