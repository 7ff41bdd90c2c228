'use strict';

// BullMQ on Redis, driven by WorkQueue.Benchmarks (Support/BullMqProcess.cs) over stdin/stdout, as the Hangfire on
// Redis agent is (WorkQueue.Benchmarks.HangfireRedis/Program.cs): one command line in, one reply line out.
//   start <host:port> <concurrency> <remove-on-complete>
//                                          -> "ready"            a Queue and a Worker with <concurrency> on the redis-server
//                                                                at <host:port>; <remove-on-complete>: "age:<s>" (keep
//                                                                completed jobs <s> seconds), "true" (remove at once) or
//                                                                "keep" (BullMQ's default: keep every one)
//   batch <jobs> <producers> <in-flight> <add|addBulk>
//                                          -> "done <ms>"        <producers> producers add <jobs> jobs in all, each keeping
//                                                                up to <in-flight> adds awaited at a time ("add": that many
//                                                                queue.add calls, then the next; "addBulk": one
//                                                                queue.addBulk of that many); the reply comes once every
//                                                                one of them has run
//   schedule <id> <delay-ticks> <timeout-s>
//                                          -> "late <ms>"        one delayed job (the delay option) due <delay-ticks>
//                                                                (100 ns) from now; the reply comes once it has started,
//                                                                with its lateness (the job's first line minus its due
//                                                                time, this process's monotonic clock)
//   stop                                   -> "stopped"          closes the worker and the queue and exits
// A failure replies "error <message>" and exits with code 1. Nothing else is written to stdout (BullMQ's and ioredis's
// errors go to stderr).

const { performance } = require('node:perf_hooks');
const readline = require('node:readline');
const { Queue, Worker } = require('bullmq');

const QueueName = 'bench';
const BatchTimeoutMs = 10 * 60 * 1000;

let queue;
let worker;

// The batch in progress: jobs still to run, and what to call when none is left.
let remaining = 0;
let onBatchDone = null;

// The delayed job awaited: its id, and what to call with the time its first line ran.
let expectedScheduled = null;
let onScheduledStarted = null;

// The job: a no-op, as WorkQueue's handler and Hangfire's job are. It counts itself and, when it is the delayed job
// awaited, reports the time of its first line.
async function processJob(job) {
  // The job's first line: the time is read before anything else.
  const now = performance.now();
  const id = job.data.id;
  if (id === expectedScheduled && onScheduledStarted !== null) {
    const started = onScheduledStarted;
    onScheduledStarted = null;
    started(now);
  }

  if (--remaining === 0 && onBatchDone !== null) {
    const done = onBatchDone;
    onBatchDone = null;
    done();
  }
}

function parseRemoveOnComplete(value) {
  if (value === 'keep') {
    return undefined;
  }

  if (value === 'true') {
    return true;
  }

  const age = /^age:(\d+)$/.exec(value);
  if (age !== null) {
    return { age: Number(age[1]) };
  }

  throw new Error(`unknown remove-on-complete setting '${value}'`);
}

function parseCount(value) {
  if (!/^\d+$/.test(value)) {
    throw new Error(`not a count: '${value}'`);
  }

  return Number(value);
}

async function start(address, concurrency, removeOnComplete) {
  const colon = address.lastIndexOf(':');
  const connection = { host: address.slice(0, colon), port: parseCount(address.slice(colon + 1)) };
  queue = new Queue(QueueName, { connection });
  queue.on('error', (e) => console.error(`queue error: ${e.message}`));
  const removal = parseRemoveOnComplete(removeOnComplete);
  worker = new Worker(QueueName, processJob, {
    connection,
    concurrency: parseCount(concurrency),
    ...(removal === undefined ? {} : { removeOnComplete: removal }),
  });
  worker.on('error', (e) => console.error(`worker error: ${e.message}`));
  worker.on('failed', (job, e) => console.error(`job ${job?.id} failed: ${e.message}`));
  await queue.waitUntilReady();
  await worker.waitUntilReady();
  return 'ready';
}

async function produce(first, step, jobs, inFlight, mode) {
  const window = [];
  for (let i = first; i < jobs; i += step) {
    window.push(i);
    if (window.length === inFlight) {
      await send(window, mode);
      window.length = 0;
    }
  }

  if (window.length > 0) {
    await send(window, mode);
  }
}

function send(ids, mode) {
  return mode === 'addBulk'
    ? queue.addBulk(ids.map((id) => ({ name: 'order', data: { id } })))
    : Promise.all(ids.map((id) => queue.add('order', { id })));
}

async function batch(jobs, producers, inFlight, mode) {
  if (mode !== 'add' && mode !== 'addBulk') {
    throw new Error(`unknown mode '${mode}'`);
  }

  remaining = jobs;
  const allRun = new Promise((resolve) => { onBatchDone = resolve; });
  const startedAt = performance.now();
  const adds = [];
  for (let p = 0; p < producers; p++) {
    adds.push(produce(p, producers, jobs, inFlight, mode));
  }

  await Promise.all(adds);
  await withTimeout(allRun, BatchTimeoutMs, () => `${remaining} of ${jobs} jobs still not run after ${BatchTimeoutMs / 60000} min`);
  return `done ${(performance.now() - startedAt).toFixed(3)}`;
}

async function schedule(id, delayTicks, timeoutSeconds) {
  const delayMs = delayTicks / 10_000;
  const started = new Promise((resolve) => { onScheduledStarted = resolve; });
  expectedScheduled = id;
  // No job of a batch is left, so only this one counts down from here.
  remaining = Number.MAX_SAFE_INTEGER;
  const due = performance.now() + delayMs;
  // BullMQ takes whole milliseconds (its due time is the client's Date.now() plus the delay): rounded up, so the job
  // is never due before the sample's due time on that account (WorkQueue rounds its delay up too).
  await queue.add('order', { id }, { delay: Math.ceil(delayMs) });
  const firstLine = await withTimeout(started, timeoutSeconds * 1000, () => `scheduled job ${id} did not start within ${timeoutSeconds} s`);
  expectedScheduled = null;
  return `late ${(firstLine - due).toFixed(4)}`;
}

function withTimeout(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(message())), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function stop() {
  await worker?.close();
  await queue?.close();
  return 'stopped';
}

async function run(words) {
  switch (words[0]) {
    case 'start':
      if (words.length === 4) return start(words[1], words[2], words[3]);
      break;
    case 'batch':
      if (words.length === 5) return batch(parseCount(words[1]), parseCount(words[2]), parseCount(words[3]), words[4]);
      break;
    case 'schedule':
      if (words.length === 4) return schedule(parseCount(words[1]), parseCount(words[2]), parseCount(words[3]));
      break;
    case 'stop':
      if (words.length === 1) return stop();
      break;
  }

  throw new Error(`Unknown command: '${words.join(' ')}'.`);
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    const words = line.split(' ').filter((w) => w.length > 0);
    if (words.length === 0) {
      continue;
    }

    try {
      process.stdout.write(`${await run(words)}\n`);
    } catch (e) {
      process.stdout.write(`error ${e.name}: ${String(e.message).replace(/\r?\n/g, ' ')}\n`);
      process.exit(1);
    }

    if (words[0] === 'stop') {
      process.exit(0);
    }
  }

  // stdin closed without a stop: close what is open, so the process can exit.
  await stop();
}

main();
