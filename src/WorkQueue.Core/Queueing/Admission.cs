using WorkQueue.Internal;

namespace WorkQueue.Queueing;

/// <summary>
/// Whether a queue takes new jobs: from anyone (open), only from code running inside a job of the same provider
/// (draining: work already accepted flows on through queues that feed each other), or from nobody (closed).
/// </summary>
internal sealed class Admission
{
    private const int Open = 0;
    private const int Draining = 1;
    private const int Closed = 2;

    private readonly object? _flowMarker;
    private volatile int _state;

    public Admission(object? flowMarker)
    {
        _flowMarker = flowMarker;
    }

    public bool IsOpen => _state == Open;

    public bool Allows() => _state switch
    {
        Open => true,
        Draining => JobFlow.IsInsideJobOf(_flowMarker),
        _ => false,
    };

    public void BeginDraining()
    {
        if (_state == Open)
        {
            _state = Draining;
        }
    }

    public void Close() => _state = Closed;
}
