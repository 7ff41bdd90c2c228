namespace WorkQueue.DurableChaos;

/// <summary>Every worker's console output in one file of the run's directory, and the error lines counted for the report.</summary>
internal sealed class WorkerLog : IDisposable
{
    private readonly Lock _lock = new();
    private readonly StreamWriter _writer;
    private readonly List<string> _firstErrors = [];
    private int _errors;

    public WorkerLog(string path)
    {
        Path = path;
        _writer = new StreamWriter(path, append: false) { AutoFlush = true };
    }

    public string Path { get; }

    /// <summary>Gets how many lines were logged at Error or Critical (<c>fail:</c>/<c>crit:</c>), or were an unhandled exception.</summary>
    public int Errors
    {
        get
        {
            lock (_lock)
            {
                return _errors;
            }
        }
    }

    public IReadOnlyList<string> FirstErrors
    {
        get
        {
            lock (_lock)
            {
                return [.. _firstErrors];
            }
        }
    }

    public void Write(string source, string line)
    {
        lock (_lock)
        {
            string text = $"[{source}] {line}";
            _writer.WriteLine(text);
            if (line.Contains("fail:", StringComparison.Ordinal) || line.Contains("crit:", StringComparison.Ordinal)
                || line.StartsWith("Unhandled exception", StringComparison.Ordinal))
            {
                _errors++;
                if (_firstErrors.Count < 5)
                {
                    _firstErrors.Add(text);
                }
            }
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _writer.Dispose();
        }
    }
}
