using System.Runtime.InteropServices;

namespace WorkQueue.Internal;

/// <summary>
/// A counter on a cache line of its own (128 bytes, the value in the middle: adjacent-line prefetching pairs lines), so
/// that one side's writes do not invalidate the line another side's hot fields live on. Used where a producer and the
/// workers would otherwise write or read next to each other on every job.
/// </summary>
[StructLayout(LayoutKind.Explicit, Size = 128)]
internal struct PaddedInt64
{
    [FieldOffset(64)]
    public long Value;
}
