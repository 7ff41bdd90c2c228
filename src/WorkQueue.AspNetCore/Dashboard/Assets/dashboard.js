// WorkQueue dashboard: a plain script, no framework, no build step.
// Every data and control call goes to the admin endpoints, whose protection applies. Data from the server is put into
// the page with textContent and DOM calls only, never as HTML.
(function () {
  'use strict';

  const PREFIX = meta('workqueue-admin-prefix').replace(/\/+$/, '');
  const KEY_HEADER = meta('workqueue-api-key-header');
  const KEY_STORE = 'workqueue-admin-key';
  const REFRESH_MS = 1000;
  const WINDOW_MS = 5 * 60 * 1000;
  const SVG = 'http://www.w3.org/2000/svg';
  const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

  // What a queue card shows. Each entry reads one value from the queue's JSON; an entry whose value is undefined is
  // hidden, so fields the server adds later (durable queues: stream length, pending, consumers) are one line here.
  const STATS = [
    { label: 'Workers', value: q => q.workers && `${q.workers.current} (${q.workers.busy} busy)` },
    { label: 'Min / max', value: q => q.workers && `${q.workers.min} / ${q.workers.max}` },
    { label: 'Mode', value: q => q.workers && q.workers.mode },
    { label: 'Unfinished', value: q => q.totals && fmt(q.totals.unfinished) },
    { label: 'Running', value: q => q.jobs && `${fmt(q.jobs.running)} of ${fmt(q.jobs.maxConcurrency)}` },
    { label: 'Stuck', value: q => q.stuckJobs && fmt(q.stuckJobs.length) },
    { label: 'When full', value: q => q.fullMode },
    { label: 'Wait p50 / p99', value: q => q.queueWaitMs && `${ms(q.queueWaitMs.p50)} / ${ms(q.queueWaitMs.p99)}` },
    { label: 'Scheduled', value: q => fmt(scheduledCount(q)) },
  ];
  // A durable queue's figures, read from Redis by the instance that answers (cluster-wide, null until first read).
  const DURABLE = [
    { label: 'Stream length', value: q => q.durable && fmt(q.durable.streamLength) },
    { label: 'Pending', value: q => q.durable && fmt(q.durable.pending) },
    { label: 'Lag', value: q => q.durable && fmt(q.durable.lag) },
    { label: 'Delayed retries', value: q => q.durable && fmt(q.durable.delayedRetries) },
    { label: 'Dead letters', value: q => q.durable && fmt(q.durable.deadLetters) },
    { label: 'Held here', value: q => q.durable && fmt(q.durable.heldHere) },
  ];
  const TOTALS = [
    { label: 'Enqueued', value: q => q.totals && fmt(q.totals.enqueued) },
    { label: 'Succeeded', value: q => q.totals && fmt(q.totals.succeeded) },
    { label: 'Failed', value: q => q.totals && fmt(q.totals.failed) },
    { label: 'Retried', value: q => q.totals && fmt(q.totals.retried) },
    { label: 'Dead-lettered', value: q => q.totals && fmt(q.totals.deadLettered) },
    { label: 'Dropped', value: q => q.totals && fmt(q.totals.dropped) },
    { label: 'Rejected', value: q => q.totals && fmt(q.totals.rejected) },
    { label: 'Abandoned', value: q => q.totals && fmt(q.totals.abandoned) },
    { label: 'Canceled', value: q => q.totals && fmt(q.totals.canceled) },
  ];
  const CHARTS = [
    { title: 'Throughput', unit: 'jobs/s', series: [{ name: 'jobs/s', value: s => s.jobsPerSecond }] },
    {
      title: 'Queue wait', unit: 'ms', series: [
        { name: 'p50', value: s => s.queueWaitP50Ms },
        { name: 'p99', value: s => s.queueWaitP99Ms },
      ],
    },
    { title: 'Depth', durableTitle: 'Prefetched here', unit: 'jobs', series: [{ name: 'depth', value: s => s.depth }] },
    { title: 'Busy workers', unit: 'threads', series: [{ name: 'busy', value: s => s.busy }] },
  ];

  const cards = new Map();
  const samples = new Map();
  let lastSample = 0;
  let waitingForKey = false;

  const el = {
    status: document.getElementById('status'),
    updated: document.getElementById('updated'),
    error: document.getElementById('error'),
    queues: document.getElementById('queues'),
    recurring: document.getElementById('recurring'),
    threadpool: document.getElementById('threadpool'),
    keyForm: document.getElementById('key-form'),
    keyInput: document.getElementById('key-input'),
    keyMessage: document.getElementById('key-message'),
  };

  el.keyForm.addEventListener('submit', event => {
    event.preventDefault();
    const key = el.keyInput.value.trim();
    if (!key) {
      el.keyMessage.textContent = 'Enter the admin key.';
      el.keyInput.focus();
      return;
    }
    sessionStorage.setItem(KEY_STORE, key);
    el.keyInput.value = '';
    el.keyForm.hidden = true;
    waitingForKey = false;
    refresh();
  });

  // ---- The admin API ----

  class ApiError extends Error {
    constructor(status, text, problem) {
      super(text);
      this.status = status;
      // The problem-details body, for callers that read more than its words (a 409's job).
      this.problem = problem || null;
    }
  }

  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    const key = sessionStorage.getItem(KEY_STORE);
    if (KEY_HEADER && key) {
      headers[KEY_HEADER] = key;
    }
    const init = { method, headers, cache: 'no-store', credentials: 'same-origin' };
    if (method !== 'GET') {
      // A JSON content type makes the call a non-simple request, which the admin endpoints require for changes.
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body || {});
    }
    let response;
    try {
      response = await fetch(PREFIX + path, init);
    } catch (e) {
      throw new ApiError(0, `The server did not answer (${e.message}).`);
    }
    if (response.ok) {
      // 204 No Content (a deleted dead letter) has no body to read.
      return response.status === 204 ? null : response.json();
    }
    const { text, problem } = await describe(response);
    if (response.status === 401 || (response.status === 403 && KEY_HEADER && key)) {
      askForKey(response.status, key);
    }
    throw new ApiError(response.status, text, problem);
  }

  async function describe(response) {
    let text = `${response.status} ${response.statusText}`.trim();
    let problem = null;
    try {
      problem = await response.json();
      if (problem.title) {
        text = `${response.status} ${problem.title}`;
      }
      if (problem.detail) {
        text += `: ${problem.detail}`;
      }
      if (problem.errors) {
        for (const [field, messages] of Object.entries(problem.errors)) {
          text += `\n${field}: ${[].concat(messages).join(' ')}`;
        }
      }
    } catch (_) {
      // Not a problem-details body: the status line says what there is to say.
    }
    return { text, problem: problem && typeof problem === 'object' ? problem : null };
  }

  function askForKey(status, sentKey) {
    if (!KEY_HEADER) {
      return;
    }
    if (sentKey) {
      sessionStorage.removeItem(KEY_STORE);
    }
    waitingForKey = true;
    el.keyMessage.textContent = sentKey
      ? `The admin endpoints refused the key (${status}). Enter the key again.`
      : `The admin endpoints need a key, sent as the ${KEY_HEADER} header.`;
    if (el.keyForm.hidden) {
      el.keyForm.hidden = false;
      el.keyInput.focus();
    }
  }

  const queuePath = name => '/' + encodeURIComponent(name);

  // ---- Polling ----

  let timer = 0;
  let running = null;
  let again = false;

  // One refresh at a time: a control's refresh that arrives meanwhile runs right after the current one.
  function refresh() {
    if (running) {
      again = true;
      return running;
    }
    clearTimeout(timer);
    running = update().finally(() => {
      running = null;
      if (again) {
        again = false;
        refresh();
      } else {
        timer = setTimeout(refresh, REFRESH_MS);
      }
    });
    return running;
  }

  async function update() {
    if (waitingForKey) {
      setStatus('Waiting for the admin key');
      return;
    }
    try {
      const queues = await api('GET', '/');
      await loadHistory();
      render(queues);
      updateJobQueues(queues);
      renderRecurring(await api('GET', '/recurring'));
      renderThreadPool(await api('GET', '/threadpool'));
      showError('');
      setStatus(`Live: ${queues.length} ${queues.length === 1 ? 'queue' : 'queues'}`);
      el.updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      const hint = e.status === 404 && cards.size === 0
        ? `\nNo admin endpoints answer at ${PREFIX || '/'}: map them with MapWorkQueueAdmin, or set WorkQueueDashboardOptions.AdminPrefix to where they are.`
        : '';
      showError(e.message + hint);
      setStatus('Not updating');
    }
  }

  async function loadHistory() {
    // The server samples every queue once a second (AddWorkQueueDashboard, which MapWorkQueueDashboard requires), so a
    // page opened now draws the last minutes at once and then asks only for what is new.
    const history = await api('GET', `/history?since=${lastSample}`);
    for (const queue of history.queues) {
      const list = samplesOf(queue.name);
      for (const sample of queue.samples) {
        if (list.length > 0 && sample.t <= list[list.length - 1].t) {
          continue;
        }
        list.push(sample);
        lastSample = Math.max(lastSample, sample.t);
      }
    }
    trim();
  }

  function samplesOf(name) {
    if (!samples.has(name)) {
      samples.set(name, []);
    }
    return samples.get(name);
  }

  // Chart time is the server's (the newest sample), so a browser whose clock is off still draws the right window.
  function trim() {
    const oldest = lastSample - WINDOW_MS;
    for (const list of samples.values()) {
      while (list.length > 0 && list[0].t < oldest) {
        list.shift();
      }
    }
  }

  function setStatus(text) {
    if (el.status.textContent !== text) {
      el.status.textContent = text;
    }
  }

  function showError(text) {
    el.error.textContent = text;
    el.error.hidden = !text;
  }

  // ---- Rendering ----

  function render(queues) {
    const seen = new Set();
    for (const q of queues) {
      seen.add(q.name);
      let card = cards.get(q.name);
      if (!card) {
        card = createCard(q);
        cards.set(q.name, card);
        el.queues.appendChild(card.root);
      }
      updateCard(card, q);
    }
    for (const [name, card] of cards) {
      if (!seen.has(name)) {
        card.root.remove();
        cards.delete(name);
      }
    }
  }

  let nextId = 0;

  function createCard(q) {
    const id = `q${nextId++}`;
    // A queue is durable or in memory for the life of the process: the card is built for one or the other.
    const durable = Boolean(q.durable);
    const root = make('section', durable ? 'queue durable' : 'queue');
    root.setAttribute('aria-labelledby', `${id}-name`);
    root.dataset.queue = q.name;

    const head = make('div', 'queue-head');
    const title = make('h2', '', q.name);
    title.id = `${id}-name`;
    const running = make('span', 'badge');
    const accepting = make('span', 'badge');
    head.append(title, running, accepting);
    const connection = durable ? make('span', 'badge') : null;
    if (durable) {
      head.append(make('span', 'badge kind', 'durable'), connection);
    }

    // A durable queue's capacity bounds its unfinished jobs in Redis; its in-process depth is only the prefetch.
    const depthLabel = make('div', 'depth-line');
    const depthName = make('span', '', durable ? 'Unfinished in Redis' : 'Depth');
    const depthText = make('span', 'depth-text');
    depthLabel.append(depthName, depthText);
    const bar = make('div', 'bar');
    bar.setAttribute('aria-hidden', 'true');
    const fill = document.createElement('span');
    bar.appendChild(fill);

    const stats = fieldList(STATS, 'stats');
    const redis = durable ? createDurable(q, id) : null;
    const charts = make('div', 'charts');
    const chartViews = CHARTS.map(spec => createChart(durable && spec.durableTitle ? { ...spec, title: spec.durableTitle } : spec, charts));
    const totalsTitle = make('h3', '', 'Totals');
    const totals = fieldList(TOTALS, 'totals');

    const controls = createControls(q, id);
    const lookup = createJobLookup(q, id);
    const scheduled = createScheduled(q, durable);
    const deadLetters = createDeadLetters(q, id, durable);

    root.append(head, depthLabel, bar, stats.root);
    if (redis) {
      root.append(redis.root);
    }
    root.append(charts, totalsTitle, totals.root, controls.root, lookup.root, scheduled.root, deadLetters.root);
    return { root, durable, running, accepting, connection, depthText, bar, fill, stats, redis, totals, chartViews, controls, scheduled, deadLetters };
  }

  function updateCard(card, q) {
    setText(card.running, q.paused ? 'paused' : 'running');
    card.running.className = `badge ${q.paused ? 'bad' : 'good'}`;
    setText(card.accepting, q.accepting ? 'accepting' : 'not accepting');
    card.accepting.className = `badge ${q.accepting ? 'good' : 'bad'}`;

    let used = q.depth;
    if (card.durable) {
      const d = q.durable || {};
      const connected = d.connected === true;
      setText(card.connection, connected ? 'Redis connected' : 'Redis not connected');
      card.connection.className = `badge ${connected ? 'good' : 'bad'}`;
      // Capacity counts the stream's entries and the retries waiting in Redis (the enqueue script's rule).
      used = typeof d.streamLength === 'number' ? d.streamLength + (d.delayedRetries || 0) : null;
    }
    const share = q.capacity > 0 && typeof used === 'number' ? used / q.capacity : 0;
    setText(card.depthText, `${fmt(used)} / ${fmt(q.capacity)} (${(share * 100).toFixed(share > 0 && share < 0.01 ? 2 : 0)} %)`);
    card.fill.style.width = `${Math.min(100, share * 100)}%`;
    card.bar.classList.toggle('high', share >= 0.9);

    updateFields(card.stats, q);
    if (card.redis) {
      updateDurable(card.redis, q);
    }
    updateFields(card.totals, q);
    const list = samples.get(q.name) || [];
    for (const chart of card.chartViews) {
      drawChart(chart, list);
    }
    updateControls(card.controls, q);
    updateScheduled(card.scheduled, q);
    updateDeadLetters(card.deadLetters, q);
  }

  function fieldList(specs, className) {
    const root = make('dl', `fields ${className}`);
    const items = specs.map(spec => {
      const wrap = document.createElement('div');
      const dt = make('dt', '', spec.label);
      const dd = document.createElement('dd');
      wrap.append(dt, dd);
      root.appendChild(wrap);
      return { spec, wrap, dd };
    });
    return { root, items };
  }

  function updateFields(list, q) {
    for (const item of list.items) {
      const value = item.spec.value(q);
      item.wrap.hidden = value === undefined || value === null;
      setText(item.dd, value === undefined || value === null ? '' : String(value));
    }
  }

  // ---- Charts: an SVG polyline per series over the last five minutes ----

  function createChart(spec, parent) {
    const figure = make('figure', 'chart');
    const caption = document.createElement('figcaption');
    const name = make('span', '', `${spec.title} (${spec.unit})`);
    const now = make('span', 'chart-now');
    caption.append(name, now);
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 300 60');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    const lines = spec.series.map((_, i) => {
      const line = document.createElementNS(SVG, 'polyline');
      line.setAttribute('class', `s${i}`);
      svg.appendChild(line);
      return line;
    });
    figure.append(caption, svg);
    parent.appendChild(figure);
    return { spec, svg, lines, now };
  }

  function drawChart(chart, list) {
    const end = lastSample;
    const start = end - WINDOW_MS;
    let max = 0;
    for (const sample of list) {
      for (const series of chart.spec.series) {
        max = Math.max(max, series.value(sample) || 0);
      }
    }
    const top = max > 0 ? max * 1.1 : 1;
    chart.spec.series.forEach((series, i) => {
      const points = list.map(sample => {
        const x = ((sample.t - start) / WINDOW_MS) * 300;
        const y = 60 - ((series.value(sample) || 0) / top) * 58 - 1;
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      });
      chart.lines[i].setAttribute('points', points.join(' '));
    });
    const last = list[list.length - 1];
    const current = chart.spec.series
      .map(series => `${chart.spec.series.length > 1 ? series.name + ' ' : ''}${last ? fmt(series.value(last)) : '-'}`)
      .join(', ');
    setText(chart.now, `${current} (peak ${fmt(max)})`);
    chart.svg.setAttribute('aria-label',
      `${chart.spec.title} over the last ${WINDOW_MS / 60000} minutes: now ${current} ${chart.spec.unit}, peak ${fmt(max)}.`);
  }

  // ---- Controls: worker count, auto, pause and resume ----

  function createControls(q, id) {
    const root = make('form', 'controls');
    root.noValidate = true;
    root.setAttribute('aria-label', `Controls for ${q.name}`);
    const label = make('label', '', 'Worker count');
    label.htmlFor = `${id}-count`;
    const input = document.createElement('input');
    input.type = 'number';
    input.id = `${id}-count`;
    input.min = '1';
    input.inputMode = 'numeric';
    const set = make('button', '', 'Set count');
    set.type = 'submit';
    const auto = make('button', '', 'Auto');
    auto.type = 'button';
    const pause = make('button', 'pause', 'Pause');
    pause.type = 'button';
    const message = make('p', 'error');
    message.setAttribute('role', 'alert');
    root.append(label, input, set, auto, pause, message);

    const path = queuePath(q.name);
    const act = async (button, method, route, body, done) => {
      button.disabled = true;
      message.textContent = '';
      try {
        await api(method, path + route, body);
        if (done) {
          done();
        }
        await refresh();
      } catch (e) {
        message.textContent = e.message;
      } finally {
        button.disabled = false;
      }
    };
    root.addEventListener('submit', event => {
      event.preventDefault();
      const text = input.value.trim();
      if (!/^-?\d+$/.test(text)) {
        message.textContent = 'Enter a whole number of workers.';
        input.focus();
        return;
      }
      act(set, 'PUT', '/workers', { count: Number(text) }, () => { input.value = ''; });
    });
    auto.addEventListener('click', () => act(auto, 'PUT', '/workers', { mode: 'auto' }));
    pause.addEventListener('click', () => {
      const paused = pause.dataset.paused === 'true';
      act(pause, 'POST', paused ? '/resume' : '/pause', {});
    });
    return { root, input, pause };
  }

  function updateControls(controls, q) {
    if (q.workers) {
      controls.input.max = String(q.workers.max);
      controls.input.placeholder = String(q.workers.current);
    }
    controls.pause.dataset.paused = String(q.paused);
    setText(controls.pause, q.paused ? 'Resume' : 'Pause');
  }

  // ---- A job by id: its status, and Cancel while it has not ended (an in-memory or a durable queue) ----

  const JOB_STATES = {
    queued: 'Queued',
    scheduled: 'Scheduled',
    running: 'Running',
    retrying: 'Retrying',
    succeeded: 'Succeeded',
    deadLettered: 'Dead-lettered',
    canceled: 'Canceled',
    dropped: 'Dropped',
    abandoned: 'Abandoned',
  };
  const UNFINISHED = new Set(['queued', 'scheduled', 'running', 'retrying']);
  // Labels unlike the totals' ("Enqueued"), so a reader (or a test) finding a field by its label finds one.
  const JOB_FIELDS = [
    { label: 'State', value: j => stateName(j.state) },
    { label: 'Attempt', value: j => fmt(j.attempt) },
    { label: 'Accepted at', value: j => when(j.enqueuedAt) },
    { label: 'Due at', value: j => (j.runAt && (j.state === 'scheduled' || j.state === 'retrying') ? when(j.runAt) : undefined) },
    { label: 'Started at', value: j => (j.startedAt ? when(j.startedAt) : undefined) },
    { label: 'State since', value: j => when(j.stateSince) },
    { label: 'Worker', value: j => j.worker || undefined },
    { label: 'Cancel', value: j => (j.cancelRequested ? (j.cancelIgnored ? 'requested, ignored by the job' : 'requested') : undefined) },
    // Long texts get the whole width.
    { label: 'Job', value: j => j.job, wide: true },
    { label: 'Last error', value: j => j.lastError || undefined, wide: true },
  ];

  function stateName(state) {
    return JOB_STATES[state] || String(state);
  }

  function createJobLookup(q, id) {
    const root = make('form', 'job-lookup');
    root.noValidate = true;
    root.setAttribute('role', 'search');
    root.setAttribute('aria-label', `Find a job of ${q.name}`);
    const label = make('label', '', 'Job id');
    label.htmlFor = `${id}-job`;
    const input = document.createElement('input');
    input.type = 'text';
    input.id = `${id}-job`;
    // A durable queue's ids are strings (1732500000000-0): no numeric keypad for them.
    input.inputMode = q.durable ? 'text' : 'numeric';
    input.autocomplete = 'off';
    input.spellcheck = false;
    const find = make('button', '', 'Find job');
    find.type = 'submit';
    const message = make('p', 'error');
    message.setAttribute('role', 'alert');
    const done = make('p', 'done');
    done.setAttribute('role', 'status');
    const result = make('div', 'job-result');
    result.hidden = true;
    const fields = make('dl', 'job-fields');
    const items = JOB_FIELDS.map(spec => {
      const wrap = make('div', spec.wide ? 'wide' : '');
      const dd = document.createElement('dd');
      wrap.append(make('dt', '', spec.label), dd);
      fields.appendChild(wrap);
      return { spec, wrap, dd };
    });
    const cancel = make('button', 'delete', 'Cancel job');
    cancel.type = 'button';
    result.append(fields, cancel);
    root.append(label, input, find, message, done, result);

    const view = { root, input, find, message, done, result, items, cancel, durable: Boolean(q.durable), path: `${queuePath(q.name)}/jobs`, job: null, asks: 0 };
    root.addEventListener('submit', event => {
      event.preventDefault();
      lookUpJob(view);
    });
    cancel.addEventListener('click', () => {
      const job = view.job;
      if (job && window.confirm(`Cancel job ${job.id} of ${job.queue}? A job not started yet will not run; a running one is asked to stop.`)) {
        cancelJob(view, job);
      }
    });
    return view;
  }

  async function lookUpJob(view) {
    const text = view.input.value.trim();
    setText(view.message, '');
    setText(view.done, '');
    if (view.durable ? !/^s?\d+-\d+$/.test(text) : !/^\d+$/.test(text)) {
      // The API's rule; checked here too, so that ".." cannot turn the path into another route.
      showJob(view, null);
      setText(view.message, view.durable
        ? 'Enter a durable job id, such as 1732500000000-0 (or s1732500000000-1 for a scheduled job), as EnqueueAsync and ScheduleAsync return it.'
        : 'Enter a job id: a whole number from 0, as EnqueueResult.JobId and Schedule return it.');
      view.input.focus();
      return;
    }
    // Only the latest question fills the view: an older answer arriving late must not show another job.
    const ask = ++view.asks;
    view.find.disabled = true;
    try {
      const job = await api('GET', `${view.path}/${encodeURIComponent(text)}`);
      if (ask === view.asks) {
        showJob(view, job);
        setText(view.done, `Job ${job.id}: ${stateName(job.state)}, attempt ${fmt(job.attempt)} (as of ${new Date().toLocaleTimeString()}).`);
      }
    } catch (e) {
      if (ask === view.asks) {
        showJob(view, null);
        setText(view.message, e.message);
      }
    } finally {
      view.find.disabled = false;
    }
  }

  async function cancelJob(view, job) {
    const ask = ++view.asks;
    const hadFocus = document.activeElement === view.cancel;
    view.cancel.disabled = true;
    setText(view.message, '');
    setText(view.done, '');
    try {
      const result = await api('DELETE', `${view.path}/${encodeURIComponent(job.id)}`, {});
      if (ask === view.asks) {
        showJob(view, result.job);
        setText(view.done, result.outcome === 'canceled'
          ? `Canceled job ${result.job.id}: it will not run.`
          : `Asked job ${result.job.id} to stop: its cancellation token is cancelled; it ends when its code gives up (look it up again to see how).`);
      }
    } catch (e) {
      if (ask === view.asks) {
        // 409: it ended first; the problem carries the job as it ended. Otherwise what is shown no longer holds.
        showJob(view, e.status === 409 && e.problem && e.problem.job ? e.problem.job : null);
        setText(view.message, e.message);
      }
    } finally {
      view.cancel.disabled = false;
    }
    refresh();
    if (hadFocus) {
      // Disabling the focused button dropped the focus: it goes back to the button, or to the field once there is none.
      (view.result.hidden || view.cancel.hidden ? view.input : view.cancel).focus();
    }
  }

  function showJob(view, job) {
    view.job = job;
    view.result.hidden = !job;
    if (!job) {
      return;
    }
    for (const item of view.items) {
      const value = item.spec.value(job);
      item.wrap.hidden = value === undefined || value === null;
      setText(item.dd, value === undefined || value === null ? '' : String(value));
    }
    view.cancel.hidden = !UNFINISHED.has(job.state);
    view.cancel.setAttribute('aria-label', `Cancel job ${job.id}`);
  }

  // ---- The job browser: search a queue's jobs (in memory: tracked jobs; durable: read from Redis), page, open one, cancel it ----

  const JOB_PAGE_SIZE = 20;
  const browser = {
    root: document.getElementById('jobs'),
    form: document.getElementById('jobs-search'),
    queue: document.getElementById('jobs-queue'),
    id: document.getElementById('jobs-id'),
    type: document.getElementById('jobs-type'),
    error: document.getElementById('jobs-error'),
    state: document.getElementById('jobs-state'),
    alert: document.getElementById('jobs-alert'),
    status: document.getElementById('jobs-status'),
    results: document.getElementById('jobs-results'),
    title: document.getElementById('jobs-results-title'),
    payloads: document.getElementById('jobs-payloads'),
    caption: document.getElementById('jobs-caption'),
    rows: document.querySelector('#jobs-table tbody'),
    prev: document.getElementById('jobs-prev'),
    next: document.getElementById('jobs-next'),
    pageNo: document.getElementById('jobs-page'),
    // The search that the pages belong to, and the cursor of each page seen so far (the first page's is null).
    query: null,
    // The names of the durable queues offered: their ids are strings (1732500000000-0, s1732500000000-1).
    durable: new Set(),
    cursors: [null],
    page: 0,
    asks: 0,
    details: {
      root: document.getElementById('job-details'),
      title: document.getElementById('job-details-title'),
      fields: document.querySelector('#job-details dl'),
      attemptsTitle: document.getElementById('job-details-attempts-title'),
      attempts: document.getElementById('job-details-attempts'),
      payload: document.getElementById('job-details-payload'),
      alert: document.getElementById('job-details-alert'),
      status: document.getElementById('job-details-status'),
      cancel: document.getElementById('job-details-cancel'),
      close: document.getElementById('job-details-close'),
      job: null,
      queue: null,
      asks: 0,
    },
  };

  for (const [value, name] of Object.entries(JOB_STATES)) {
    browser.state.appendChild(option(value, name));
  }

  browser.form.addEventListener('submit', event => {
    event.preventDefault();
    searchJobs();
  });
  browser.next.addEventListener('click', () => turnPage(1));
  browser.prev.addEventListener('click', () => turnPage(-1));
  browser.details.close.addEventListener('click', closeDetails);
  browser.details.cancel.addEventListener('click', () => {
    const { job, queue } = browser.details;
    if (job && window.confirm(`Cancel job ${job.id} of ${queue}? A job not started yet will not run; a running one is asked to stop.`)) {
      cancelFromDetails(job, queue);
    }
  });

  function option(value, text) {
    const node = document.createElement('option');
    node.value = value;
    node.textContent = text;
    return node;
  }

  // Every queue is offered: an in-memory one searches its tracked jobs, a durable one its jobs in Redis.
  function updateJobQueues(queues) {
    const names = queues.map(q => q.name);
    browser.durable = new Set(queues.filter(q => q.durable).map(q => q.name));
    const current = Array.from(browser.queue.options, o => o.value);
    if (names.join('\n') !== current.join('\n')) {
      const selected = browser.queue.value;
      browser.queue.replaceChildren(...names.map(name => option(name, name)));
      if (names.includes(selected)) {
        browser.queue.value = selected;
      }
    }
    browser.root.hidden = names.length === 0;
  }

  async function searchJobs() {
    const queue = browser.queue.value;
    setText(browser.alert, '');
    setText(browser.status, '');
    if (!queue) {
      setText(browser.alert, 'There is no queue to search.');
      return;
    }
    const idText = browser.id.value.trim();
    if (idText) {
      const durable = browser.durable.has(queue);
      if (durable ? !/^s?\d+-\d+$/.test(idText) : !/^\d+$/.test(idText)) {
        // The API's rule; checked here too, so that ".." cannot turn the path into another route.
        setText(browser.alert, durable
          ? 'Enter a durable job id, such as 1732500000000-0 (or s1732500000000-1 for a scheduled job), as EnqueueAsync and ScheduleAsync return it. Leave it empty to search by type, error or state.'
          : 'Enter a job id: a whole number from 0, as EnqueueResult.JobId and Schedule return it. Leave it empty to search by type, error or state.');
        browser.id.focus();
        return;
      }
      const ask = ++browser.asks;
      try {
        const job = await api('GET', `${queuePath(queue)}/jobs/${encodeURIComponent(idText)}`);
        if (ask === browser.asks) {
          browser.query = null;
          showPage(queue, { jobs: [job], next: null, scanned: 1, payloadsShown: job.payloadsShown }, `Job ${job.id} found: ${stateName(job.state)}.`);
          openDetails(job, queue);
        }
      } catch (e) {
        if (ask === browser.asks) {
          hideResults();
          setText(browser.alert, e.message);
        }
      }
      return;
    }
    browser.query = { queue, type: browser.type.value.trim(), error: browser.error.value.trim(), state: browser.state.value };
    browser.cursors = [null];
    browser.page = 0;
    await loadJobPage();
  }

  async function turnPage(step) {
    if (!browser.query) {
      return;
    }
    const page = browser.page + step;
    if (page < 0 || page >= browser.cursors.length) {
      return;
    }
    browser.page = page;
    await loadJobPage();
  }

  async function loadJobPage() {
    const q = browser.query;
    const params = new URLSearchParams();
    if (q.state) {
      params.set('state', q.state);
    }
    if (q.type) {
      params.set('type', q.type);
    }
    if (q.error) {
      params.set('error', q.error);
    }
    const cursor = browser.cursors[browser.page];
    if (cursor) {
      params.set('cursor', cursor);
    }
    params.set('limit', String(JOB_PAGE_SIZE));
    setText(browser.alert, '');
    const ask = ++browser.asks;
    try {
      const page = await api('GET', `${queuePath(q.queue)}/jobs?${params}`);
      if (ask !== browser.asks) {
        return;
      }
      browser.cursors.length = browser.page + 1;
      if (page.next) {
        browser.cursors.push(page.next);
      }
      const count = page.jobs.length;
      const more = page.next ? ' More on the next page.' : '';
      const text = count === 0 && page.next
        ? `Page ${browser.page + 1}: no match among the ${fmt(page.scanned)} jobs read; the next page reads on.`
        : `Page ${browser.page + 1}: ${fmt(count)} ${count === 1 ? 'job' : 'jobs'} of ${q.queue} (${fmt(page.scanned)} read).${more}`;
      showPage(q.queue, page, text);
      closeDetails(false);
    } catch (e) {
      if (ask === browser.asks) {
        hideResults();
        setText(browser.alert, e.message);
      }
    }
  }

  function hideResults() {
    browser.results.hidden = true;
    closeDetails(false);
  }

  function showPage(queue, page, text) {
    browser.rows.replaceChildren(...page.jobs.map(job => jobRow(job, queue)));
    if (page.jobs.length === 0) {
      const cell = make('td', 'muted', 'No job matches.');
      cell.colSpan = 7;
      const row = document.createElement('tr');
      row.appendChild(cell);
      browser.rows.appendChild(row);
    }
    setText(browser.caption, `Jobs of ${queue}, page ${browser.query ? browser.page + 1 : 1} (times in this browser's zone)`);
    setText(browser.payloads, page.payloadsShown
      ? 'Payloads are shown (WorkQueueAdminOptions.ShowPayloads is on): open a job to see its payload.'
      : 'Payloads are hidden by configuration (WorkQueueAdminOptions.ShowPayloads is off; payloads may hold personal data).');
    const paged = Boolean(browser.query);
    browser.prev.disabled = !paged || browser.page === 0;
    browser.next.disabled = !paged || browser.page + 1 >= browser.cursors.length;
    setText(browser.pageNo, paged ? `Page ${browser.page + 1}` : '');
    browser.results.hidden = false;
    setText(browser.status, text);
    browser.title.focus();
  }

  function jobRow(job, queue) {
    const row = document.createElement('tr');
    row.dataset.jobId = String(job.id);
    const open = make('button', 'link', String(job.id));
    open.type = 'button';
    open.setAttribute('aria-label', `Job ${job.id} details`);
    open.addEventListener('click', () => openDetails(job, queue));
    const id = document.createElement('td');
    id.appendChild(open);
    const state = make('td', 'state', stateName(job.state));
    row.append(id, make('td', '', job.job), state, make('td', 'num', fmt(job.attempt)), make('td', '', when(job.enqueuedAt)), make('td', '', when(job.stateSince)), make('td', 'last-error', job.lastError || ''));
    return row;
  }

  function openDetails(job, queue) {
    const d = browser.details;
    setText(d.alert, '');
    setText(d.status, '');
    showDetails(job, queue);
    d.root.hidden = false;
    d.title.focus();
  }

  function showDetails(job, queue) {
    const d = browser.details;
    d.job = job;
    d.queue = queue;
    setText(d.title, `Job ${job.id} of ${queue}`);
    const fields = [{ label: 'Id', value: () => String(job.id) }, ...JOB_FIELDS];
    d.fields.replaceChildren(...fields.map(spec => {
      const value = spec.value(job);
      const wrap = make('div', spec.wide ? 'wide' : '');
      wrap.hidden = value === undefined || value === null;
      wrap.append(make('dt', '', spec.label), make('dd', '', value === undefined || value === null ? '' : String(value)));
      return wrap;
    }));
    showAttempts(job);
    setText(d.payload, !job.payloadsShown
      ? 'Hidden by configuration: the app has not turned on WorkQueueAdminOptions.ShowPayloads (payloads may hold personal data).'
      : job.payload !== null && job.payload !== undefined
        ? job.payload
        : 'None: a delegate job has none, and an ended job no longer holds its payload.');
    d.cancel.hidden = !UNFINISHED.has(job.state);
    d.cancel.setAttribute('aria-label', `Cancel job ${job.id}`);
    // The row of the same job shows the same state.
    const row = browser.rows.querySelector(`tr[data-job-id="${CSS.escape(String(job.id))}"] td.state`);
    if (row) {
      setText(row, stateName(job.state));
    }
  }

  // A durable job's attempt history (its attempts field); an in-memory job has none, and the list is hidden.
  function showAttempts(job) {
    const d = browser.details;
    const attempts = Array.isArray(job.attempts) ? job.attempts : null;
    d.attemptsTitle.hidden = !attempts;
    d.attempts.hidden = !attempts;
    d.attempts.replaceChildren(...(attempts || []).map(a => {
      const item = document.createElement('li');
      const parts = [`Attempt ${fmt(a.number)}: ${stateName(a.outcome)}`];
      if (a.consumer) {
        parts.push(`on ${a.consumer}`);
      }
      if (a.startedAt) {
        parts.push(`started ${when(a.startedAt)}`);
      }
      if (a.endedAt) {
        parts.push(`ended ${when(a.endedAt)}`);
      }
      item.append(make('span', '', parts.join(', ')));
      if (a.error) {
        item.append(make('pre', 'attempt-error', a.error));
      }
      return item;
    }));
    if (attempts && attempts.length === 0) {
      d.attempts.appendChild(make('li', 'muted', 'None yet: it has not run.'));
    }
  }

  function closeDetails(moveFocus) {
    const d = browser.details;
    const job = d.job;
    d.root.hidden = true;
    d.job = null;
    if (moveFocus !== false && job) {
      const button = browser.rows.querySelector(`tr[data-job-id="${CSS.escape(String(job.id))}"] button`);
      (button && !browser.results.hidden ? button : browser.title).focus();
    }
  }

  async function cancelFromDetails(job, queue) {
    const d = browser.details;
    const ask = ++d.asks;
    d.cancel.disabled = true;
    setText(d.alert, '');
    setText(d.status, '');
    try {
      const result = await api('DELETE', `${queuePath(queue)}/jobs/${encodeURIComponent(job.id)}`, {});
      if (ask === d.asks) {
        showDetails(result.job, queue);
        setText(d.status, result.outcome === 'canceled'
          ? `Canceled job ${result.job.id}: it will not run.`
          : `Asked job ${result.job.id} to stop: its cancellation token is cancelled; it ends when its code gives up.`);
      }
    } catch (e) {
      if (ask === d.asks) {
        if (e.status === 409 && e.problem && e.problem.job) {
          showDetails(e.problem.job, queue);
        }
        setText(d.alert, e.message);
      }
    } finally {
      d.cancel.disabled = false;
    }
    // Disabling the focused button dropped the focus: it goes to the details' heading, which says what changed.
    d.title.focus();
    refresh();
  }

  // ---- A durable queue's Redis figures and consumers ----

  function createDurable(q, id) {
    const root = make('div', 'redis');
    root.setAttribute('role', 'group');
    root.setAttribute('aria-labelledby', `${id}-redis`);
    const title = make('h3', '', 'Redis stream');
    title.id = `${id}-redis`;
    const source = make('p', 'muted source');
    const fields = fieldList(DURABLE, 'durable-fields');
    const lastError = make('p', 'error');
    lastError.setAttribute('role', 'alert');

    const table = make('table', 'consumers');
    const caption = make('caption', 'muted');
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    for (const name of ['Consumer', 'Pending', 'Idle']) {
      const th = make('th', name === 'Consumer' ? '' : 'num', name);
      th.scope = 'col';
      headRow.appendChild(th);
    }
    head.appendChild(headRow);
    const rows = document.createElement('tbody');
    table.append(caption, head, rows);
    root.append(title, source, fields.root, lastError, table);
    return { root, source, fields, lastError, table, caption, rows, shown: null, byName: null };
  }

  function updateDurable(view, q) {
    const d = q.durable || {};
    const read = d.readAt ? `read at ${new Date(d.readAt).toLocaleTimeString()}` : 'not read yet';
    setText(view.source, `Figures for every instance, from ${d.stream || 'the stream'} (${read})`);
    updateFields(view.fields, q);
    setText(view.lastError, d.lastError ? `Last Redis error: ${d.lastError}` : '');

    const consumers = d.consumers || [];
    setText(view.caption, `Consumers in the group (${fmt(consumers.length)})`);
    view.table.hidden = consumers.length === 0;
    // Rows are kept by consumer name and their cells updated in place, so the table does not flicker under a reader.
    const names = consumers.map(c => c.name).join('\n');
    if (names !== view.shown) {
      view.shown = names;
      const rows = new Map();
      for (const c of consumers) {
        rows.set(c.name, view.byName && view.byName.get(c.name) || consumerRow(c));
      }
      view.byName = rows;
      view.rows.replaceChildren(...Array.from(rows.values(), r => r.root));
    }
    for (const c of consumers) {
      const row = view.byName.get(c.name);
      setText(row.pending, fmt(c.pending));
      setText(row.idle, idle(c.idleMs));
    }
  }

  function consumerRow(c) {
    const row = document.createElement('tr');
    const name = make('td', 'consumer');
    name.appendChild(make('span', '', c.name));
    if (c.thisProcess) {
      row.className = 'mine';
      name.append(' ', make('span', 'badge kind', 'this process'));
    }
    const pending = make('td', 'num');
    const idleCell = make('td', 'num');
    row.append(name, pending, idleCell);
    return { root: row, pending, idle: idleCell };
  }

  // ---- Dead letters: listed when opened; a durable queue's can be requeued or deleted ----

  function createDeadLetters(q, id, durable) {
    const root = make('details', 'dead-letters');
    const summary = document.createElement('summary');
    const body = document.createElement('div');
    const note = make('p', 'muted note', durable
      ? 'Kept in Redis for every instance. Requeue runs a job again from attempt 1; Delete drops it for good.'
      : 'Kept in this process\'s memory: a record of what failed, with no runnable job to requeue.');
    const reload = make('button', '', 'Reload dead letters');
    reload.type = 'button';
    const message = make('p', 'error');
    message.setAttribute('role', 'alert');
    const done = make('p', 'done');
    done.setAttribute('role', 'status');
    const table = document.createElement('table');
    const caption = make('caption', 'muted', `Dead letters of ${q.name}, newest first (payloads are not shown)`);
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    // Few columns, so the table reads in a narrow card: the attempt, the time and the name go under the job's id.
    const columns = durable ? ['Select', 'Job', 'Error', 'Actions'] : ['Job', 'Error'];
    for (const name of columns) {
      const th = make('th', '', name);
      th.scope = 'col';
      headRow.appendChild(th);
    }
    head.appendChild(headRow);
    const rows = document.createElement('tbody');
    table.append(caption, head, rows);
    table.hidden = true;
    // A durable queue's dead letters can be requeued or deleted several at once: those ticked in the list.
    const bulk = durable ? createBulk(q) : null;
    body.append(note, reload, message, done);
    if (bulk) {
      body.appendChild(bulk.root);
    }
    body.appendChild(table);
    root.append(summary, body);

    const view = { root, summary, table, rows, message, done, reload, durable, bulk, path: `${queuePath(q.name)}/dead-letters`, byId: new Map(), messageFrom: '', count: -1, loaded: -1, loads: 0 };
    if (bulk) {
      bulk.all.addEventListener('change', () => {
        for (const box of view.rows.querySelectorAll('input.select')) {
          box.checked = bulk.all.checked;
        }
        updateBulk(view);
      });
      bulk.requeue.addEventListener('click', () => actOnSelected(view, 'requeue'));
      bulk.remove.addEventListener('click', () => {
        const count = selectedIds(view).length;
        if (count > 0 && window.confirm(`Delete ${deadLetters(count)} (the selected ones)? Their jobs will not run again.`)) {
          actOnSelected(view, 'delete');
        }
      });
    }
    view.load = () => loadDeadLetters(view);
    root.addEventListener('toggle', () => {
      if (root.open) {
        view.load();
      }
    });
    reload.addEventListener('click', () => {
      setText(done, '');
      setText(message, '');
      view.load();
    });
    return view;
  }

  async function loadDeadLetters(view) {
    // Only the latest load fills the table: an older answer arriving late must not bring back a removed row.
    const load = ++view.loads;
    try {
      const list = await api('GET', view.path);
      if (load === view.loads) {
        if (view.messageFrom === 'load') {
          setText(view.message, '');
        }
        fillDeadLetters(view, list);
        view.loaded = view.count;
      }
    } catch (e) {
      if (load === view.loads) {
        view.messageFrom = 'load';
        setText(view.message, e.message);
      }
    }
  }

  function fillDeadLetters(view, list) {
    // A durable queue lists them newest first; an in-memory one oldest first.
    const items = view.durable ? list : list.slice().reverse();
    // Rows are kept by id and moved only when they must, so a button that has the keyboard focus keeps it while the
    // list refreshes around it.
    const keep = new Map();
    let cursor = view.rows.firstChild;
    for (const item of items) {
      const key = String(item.id);
      const row = view.byId.get(key) || deadLetterRow(view, item);
      keep.set(key, row);
      if (row === cursor) {
        cursor = cursor.nextSibling;
      } else {
        view.rows.insertBefore(row, cursor);
      }
    }
    while (cursor) {
      const next = cursor.nextSibling;
      cursor.remove();
      cursor = next;
    }
    view.byId = keep;
    view.table.hidden = items.length === 0;
    updateBulk(view);
  }

  function createBulk(q) {
    const root = make('div', 'bulk');
    root.setAttribute('role', 'group');
    root.setAttribute('aria-label', `Selected dead letters of ${q.name}`);
    const label = make('label', 'select-all');
    const all = make('input', 'select-all');
    all.type = 'checkbox';
    label.append(all, ' Select all shown');
    const requeue = make('button', 'requeue-selected', 'Requeue selected');
    requeue.type = 'button';
    const remove = make('button', 'delete delete-selected', 'Delete selected');
    remove.type = 'button';
    root.append(label, requeue, remove);
    root.hidden = true;
    return { root, all, requeue, remove, busy: false };
  }

  function selectedIds(view) {
    return Array.from(view.rows.querySelectorAll('input.select:checked'), box => box.closest('tr').dataset.id);
  }

  function updateBulk(view) {
    const bulk = view.bulk;
    if (!bulk) {
      return;
    }
    const boxes = view.rows.querySelectorAll('input.select');
    const selected = selectedIds(view).length;
    bulk.root.hidden = boxes.length === 0;
    bulk.all.checked = boxes.length > 0 && selected === boxes.length;
    bulk.all.indeterminate = selected > 0 && selected < boxes.length;
    bulk.requeue.disabled = bulk.busy || selected === 0;
    bulk.remove.disabled = bulk.busy || selected === 0;
  }

  function deadLetters(count) {
    return `${fmt(count)} dead letter${count === 1 ? '' : 's'}`;
  }

  async function actOnSelected(view, action) {
    const bulk = view.bulk;
    const ids = selectedIds(view);
    if (ids.length === 0 || bulk.busy) {
      return;
    }
    const hadFocus = bulk.root.contains(document.activeElement);
    bulk.busy = true;
    updateBulk(view);
    setText(view.message, '');
    setText(view.done, '');
    try {
      const result = await api('POST', `${view.path}/${action}`, { ids });
      const verb = action === 'requeue' ? 'Requeued' : 'Deleted';
      const gone = result.notFound === 1 ? '1 was no longer there' : `${fmt(result.notFound)} were no longer there`;
      const full = result.queueFull > 0 ? `; ${fmt(result.queueFull)} not requeued: the queue is full (retry once jobs have finished)` : '';
      setText(view.done, `${verb} ${fmt(result.done)} of ${deadLetters(ids.length)}${result.notFound > 0 ? `; ${gone}` : ''}${full}.`);
    } catch (e) {
      view.messageFrom = 'action';
      // 503: Redis failed midway; the reload below shows what is left.
      setText(view.message, e.message);
    }
    bulk.busy = false;
    await view.load();
    updateBulk(view);
    refresh();
    const active = document.activeElement;
    if (hadFocus && (!bulk.root.contains(active) || active.disabled)) {
      // The button pressed is disabled now that its rows are gone: the keyboard stays in the group.
      (bulk.root.hidden ? view.reload : bulk.all).focus();
    }
  }

  function deadLetterRow(view, item) {
    const row = document.createElement('tr');
    row.dataset.id = String(item.id);
    const at = new Date(item.deadLetteredAt);
    const time = at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
    const job = make('td', 'job');
    job.append(
      make('span', 'id', view.durable ? item.jobId : `#${item.id}`), ' ',
      make('span', 'sub', view.durable ? `attempt ${item.attempt}, ${item.reason}` : `attempt ${item.attempt}`), ' ',
      make('span', 'sub', time));
    if (!view.durable) {
      job.append(' ', make('span', 'sub name', item.name));
    }
    const error = make('td', 'error-cell');
    if (item.error && item.error.type) {
      error.append(make('span', 'sub type', item.error.type), ' ');
    }
    error.appendChild(make('span', 'message', item.error ? item.error.message : ''));
    row.append(job, error);
    if (view.durable) {
      const pick = make('td', 'pick');
      const box = make('input', 'select');
      box.type = 'checkbox';
      box.setAttribute('aria-label', `Select job ${item.jobId}`);
      box.addEventListener('change', () => updateBulk(view));
      pick.appendChild(box);
      row.insertBefore(pick, job);
      const actions = make('td', 'actions');
      const requeue = make('button', 'requeue', 'Requeue');
      requeue.type = 'button';
      requeue.setAttribute('aria-label', `Requeue job ${item.jobId}`);
      const remove = make('button', 'delete', 'Delete');
      remove.type = 'button';
      remove.setAttribute('aria-label', `Delete the dead letter of job ${item.jobId}`);
      actions.append(requeue, remove);
      row.appendChild(actions);
      requeue.addEventListener('click', () => actOnDeadLetter(view, item, row, requeue, 'requeue'));
      remove.addEventListener('click', () => {
        if (window.confirm(`Delete the dead letter of job ${item.jobId}? The job will not run again.`)) {
          actOnDeadLetter(view, item, row, remove, 'delete');
        }
      });
    }
    return row;
  }

  async function actOnDeadLetter(view, item, row, button, action) {
    const buttons = Array.from(row.querySelectorAll('button'));
    const hadFocus = row.contains(document.activeElement);
    const index = Array.from(view.rows.children).indexOf(row);
    buttons.forEach(b => { b.disabled = true; });
    setText(view.message, '');
    setText(view.done, '');
    const path = `${view.path}/${encodeURIComponent(item.id)}`;
    try {
      if (action === 'requeue') {
        const result = await api('POST', `${path}/requeue`, {});
        setText(view.done, `Requeued job ${item.jobId} as ${result.newId}.`);
      } else {
        await api('DELETE', path, {});
        setText(view.done, `Deleted the dead letter of job ${item.jobId}.`);
      }
    } catch (e) {
      view.messageFrom = 'action';
      // 404: another operator (or another tab) got there first; the reload below shows the list as it is now.
      setText(view.message, e.message);
    }
    buttons.forEach(b => { b.disabled = false; });
    await view.load();
    refresh();
    if (hadFocus && !row.isConnected) {
      // The row is gone: the keyboard goes on to the same button of the row that took its place, else to Reload.
      const next = view.rows.children[Math.min(index, view.rows.children.length - 1)];
      const target = next && next.querySelector(`button.${button.className}`);
      (target || view.reload).focus();
    }
  }

  function updateDeadLetters(view, q) {
    // A durable queue's count is Redis's (every instance's, and what requeue and delete change); an in-memory queue's is
    // this process's total.
    const count = view.durable ? (q.durable ? q.durable.deadLetters : null) : (q.totals ? q.totals.deadLettered : 0);
    view.count = count;
    setText(view.summary, `Dead letters (${fmt(count)})`);
    if (view.root.open && view.loaded !== count) {
      view.loaded = count;
      view.load();
    }
  }


  // ---- Scheduled jobs: listed when opened, soonest first; each can be cancelled ----

  function scheduledCount(q) {
    return q.durable ? q.durable.scheduled : q.scheduled;
  }

  function createScheduled(q, durable) {
    const root = make('details', 'scheduled');
    const summary = document.createElement('summary');
    const body = document.createElement('div');
    const note = make('p', 'muted note', durable
      ? 'Kept in Redis for every instance; each runs once its time comes (by Redis\'s clock). Cancel removes one that is not due yet.'
      : 'Kept in this process\'s memory; a stop reports the ones not yet due. Cancel removes one that is not due yet.');
    const message = make('p', 'error');
    message.setAttribute('role', 'alert');
    const done = make('p', 'done');
    done.setAttribute('role', 'status');
    const table = document.createElement('table');
    const caption = make('caption', 'muted', `Scheduled jobs of ${q.name}, soonest first (at most 100; payloads are not shown)`);
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    for (const name of ['Job', 'Due', 'Actions']) {
      const th = make('th', '', name);
      th.scope = 'col';
      headRow.appendChild(th);
    }
    head.appendChild(headRow);
    const rows = document.createElement('tbody');
    table.append(caption, head, rows);
    table.hidden = true;
    body.append(note, message, done, table);
    root.append(summary, body);
    const view = { root, summary, rows, table, message, done, path: `${queuePath(q.name)}/scheduled`, count: -1, loaded: -1, loads: 0 };
    view.load = () => loadScheduled(view);
    root.addEventListener('toggle', () => {
      if (root.open) {
        view.load();
      }
    });
    return view;
  }

  async function loadScheduled(view) {
    const load = ++view.loads;
    try {
      const list = await api('GET', view.path);
      if (load !== view.loads) {
        return;
      }
      const focused = document.activeElement && view.rows.contains(document.activeElement) ? document.activeElement.dataset.id : null;
      view.rows.replaceChildren(...list.map(item => scheduledRow(view, item)));
      view.table.hidden = list.length === 0;
      if (focused) {
        const again = view.rows.querySelector(`button[data-id="${CSS.escape(focused)}"]`);
        if (again) {
          again.focus();
        }
      }
    } catch (e) {
      if (load === view.loads) {
        setText(view.message, e.message);
      }
    }
  }

  function scheduledRow(view, item) {
    const row = document.createElement('tr');
    const job = make('td', 'job');
    job.append(make('span', 'id', item.id), ' ', make('span', 'sub name', item.job));
    const due = make('td', '', when(item.dueAt));
    const actions = make('td', 'actions');
    const cancel = make('button', 'cancel', 'Cancel');
    cancel.type = 'button';
    cancel.dataset.id = item.id;
    cancel.setAttribute('aria-label', `Cancel scheduled job ${item.id}`);
    cancel.addEventListener('click', async () => {
      if (!window.confirm(`Cancel scheduled job ${item.id}? It will not run.`)) {
        return;
      }
      cancel.disabled = true;
      setText(view.message, '');
      try {
        await api('DELETE', `${view.path}/${encodeURIComponent(item.id)}`, {});
        setText(view.done, `Cancelled scheduled job ${item.id}.`);
      } catch (e) {
        setText(view.message, e.message);
      }
      await view.load();
      refresh();
      if (!row.isConnected) {
        (view.rows.querySelector('button') || view.summary).focus();
      }
    });
    actions.appendChild(cancel);
    row.append(job, due, actions);
    return row;
  }

  function updateScheduled(view, q) {
    const count = scheduledCount(q);
    view.count = count;
    setText(view.summary, `Scheduled (${fmt(count)})`);
    if (view.root.open && view.loaded !== count) {
      view.loaded = count;
      view.load();
    }
  }

  // ---- Recurring jobs: one table for the app, with trigger, pause/resume and remove ----

  const recurringRows = new Map();

  function renderRecurring(list) {
    el.recurring.hidden = list.length === 0 && recurringRows.size === 0;
    const body = el.recurring.querySelector('tbody');
    const seen = new Set();
    for (const job of list) {
      seen.add(job.id);
      let view = recurringRows.get(job.id);
      if (!view) {
        view = createRecurringRow(job);
        recurringRows.set(job.id, view);
        body.appendChild(view.row);
      }
      updateRecurringRow(view, job);
    }
    for (const [id, view] of recurringRows) {
      if (!seen.has(id)) {
        const hadFocus = view.row.contains(document.activeElement);
        view.row.remove();
        recurringRows.delete(id);
        if (hadFocus) {
          (body.querySelector('button') || el.recurring.querySelector('h2')).focus();
        }
      }
    }
    setText(el.recurring.querySelector('.empty'), list.length === 0 ? 'No recurring jobs.' : '');
  }

  function createRecurringRow(job) {
    const row = document.createElement('tr');
    row.dataset.id = job.id;
    const name = make('th', 'job');
    name.scope = 'row';
    const schedule = make('td', '');
    const next = make('td', '');
    const last = make('td', '');
    const actions = make('td', 'actions');
    const trigger = make('button', 'trigger', 'Run now');
    trigger.type = 'button';
    trigger.setAttribute('aria-label', `Run now: recurring job ${job.id}`);
    const pause = make('button', 'pause', 'Pause');
    pause.type = 'button';
    const remove = make('button', 'delete', 'Remove');
    remove.type = 'button';
    remove.setAttribute('aria-label', `Remove recurring job ${job.id}`);
    actions.append(trigger, pause, remove);
    row.append(name, schedule, next, last, actions);
    const view = { row, name, schedule, next, last, pause, paused: false };
    const path = `/recurring/${encodeURIComponent(job.id)}`;
    trigger.addEventListener('click', () => actOnRecurring(trigger, () => api('POST', `${path}/trigger`, {}), r => `Enqueued ${job.id} as job ${r.jobId}.`));
    pause.addEventListener('click', () => actOnRecurring(pause, () => api('POST', `${path}/${view.paused ? 'resume' : 'pause'}`, {}), r => `${job.id} ${r.paused ? 'paused' : 'resumed'}.`));
    remove.addEventListener('click', () => {
      if (window.confirm(`Remove recurring job ${job.id}? It will not run again until the app registers it again.`)) {
        actOnRecurring(remove, () => api('DELETE', path, {}), () => `Removed ${job.id}.`);
      }
    });
    return view;
  }

  function updateRecurringRow(view, job) {
    setText(view.name, job.id);
    setText(view.schedule, `${job.schedule} (${job.timeZone}) on ${job.queue}`);
    setText(view.next, job.paused ? 'paused' : when(job.nextRunAt));
    const run = job.lastRun;
    setText(view.last, run ? `${when(run.scheduledFor)}: ${run.outcome}${run.error ? ` (${run.error})` : ''}` : '-');
    view.paused = job.paused;
    setText(view.pause, job.paused ? 'Resume' : 'Pause');
    view.pause.setAttribute('aria-label', `${job.paused ? 'Resume' : 'Pause'} recurring job ${job.id}`);
  }

  async function actOnRecurring(button, call, describe) {
    const message = el.recurring.querySelector('.error');
    const done = el.recurring.querySelector('.done');
    button.disabled = true;
    setText(message, '');
    setText(done, '');
    try {
      setText(done, describe(await call()));
    } catch (e) {
      setText(message, e.message);
    }
    button.disabled = false;
    refresh();
  }

  // The CLR thread pool beside WorkQueue's own threads: a long wait there is the incident's symptom.
  function renderThreadPool(pool) {
    const text = pool.enabled
      ? `CLR thread pool: work items wait ${ms(pool.lagMs)} (max ${ms(pool.maxLagMs)}), ${fmt(pool.threads)} threads, ${fmt(pool.pendingWorkItems)} queued${pool.starving ? ': STARVING (blocking code on the pool)' : ''}`
      : 'CLR thread pool: the starvation alarm is off';
    setText(el.threadpool, text);
    el.threadpool.className = pool.starving ? 'error' : 'muted';
  }

  function when(value) {
    if (!value) {
      return '-';
    }
    const at = new Date(value);
    return at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
  }

  // ---- Helpers ----

  function make(tag, className, text) {
    const node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function setText(node, text) {
    if (node.textContent !== text) {
      node.textContent = text;
    }
  }

  function fmt(value) {
    return typeof value === 'number' && isFinite(value) ? number.format(value) : '-';
  }

  function idle(value) {
    if (typeof value !== 'number' || !isFinite(value)) {
      return '-';
    }
    const seconds = value / 1000;
    if (seconds < 60) {
      return `${number.format(Math.floor(seconds * 10) / 10)} s`;
    }
    if (seconds < 3600) {
      return `${number.format(Math.floor(seconds / 60))} min`;
    }
    return `${number.format(Math.floor(seconds / 360) / 10)} h`;
  }

  function ms(value) {
    return `${fmt(value)} ms`;
  }

  function meta(name) {
    const node = document.querySelector(`meta[name="${name}"]`);
    return node ? node.getAttribute('content') || '' : '';
  }

  refresh();
})();
