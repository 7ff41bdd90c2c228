# Drives round.lua as the store does for plain acknowledgements (see run.sh): adds n entries, reads them for one
# consumer, acknowledges them in one round with the arguments RoundArguments builds (no enqueues, no fetch, no trim).
import socket, sys
port, script, rounds, n, finished = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = socket.create_connection(('127.0.0.1', port)); f = s.makefile('rb')
def enc(*args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)
def read():
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t in b'+:': return rest
    if t == b'-': raise Exception(rest.decode())
    if t == b'$':
        l = int(rest)
        if l < 0: return None
        d = f.read(l + 2); return d[:-2]
    if t == b'*':
        l = int(rest)
        return None if l < 0 else [read() for _ in range(l)]
def call(*a):
    s.sendall(enc(*a)); return read()
sha = call('SCRIPT', 'LOAD', open(script, 'rb').read()).decode()
keys = ['b:{q}:stream', 'b:{q}:delayed', 'b:{q}:scheduled', 'b:{q}:recurring', 'b:{q}:ids', 'b:{q}:epoch']
call('XGROUP', 'CREATE', keys[0], 'workers', '$', 'MKSTREAM')
for r in range(rounds):
    s.sendall(b''.join(enc('XADD', keys[0], '*', 'p', '{"id":%d}' % i, 't', '1700000000000') for i in range(n)))
    for i in range(n): read()
    entries = call('XREADGROUP', 'GROUP', 'workers', 'c1', 'COUNT', n, 'STREAMS', keys[0], '>')[0][1]
    ids = [e[0] for e in entries]
    # A plain acknowledgement carries its times only when records are kept (finished > 0): else its id alone.
    width = 3 if int(finished) > 0 else 1
    argv = ['workers', 'c1', 1000000, 'b:{q}:nudge', 0, 256, 0, finished, 10000, 0, '', 1,
            21, 0, 21, 0, 21, len(ids), 21 + width * len(ids), 0]
    for i in ids: argv += [i, '1700000000000', '1700000000100'][:width]
    reply = call('EVALSHA', sha, len(keys), *keys, *argv)
    assert reply[2] == b'1' and reply[3] == [], reply[:6]
print('ok', rounds * n)
