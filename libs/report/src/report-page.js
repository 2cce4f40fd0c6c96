/* The run page's own script: the server's charts first (each distribution as a CDF, one point per
 * session against its start), then the client's diagnostics, then the sessions, worst first. Time
 * charts share one cursor; a chart with nothing but zeros is one sentence. Runs in the browser; no
 * network. Needs charts.js (window.DB). */
/* global DB, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const el = DB.el;
  const T = 's since the first packet';

  function part(id, title, note) {
    const box = el('div', 'part');
    box.id = id;
    box.appendChild(el('h2', 'part-title', title));
    if (note) box.appendChild(el('p', 'origin', note));
    document.getElementById('charts').appendChild(box);
    return box;
  }

  function section(parent, title, note) {
    const box = el('section');
    box.appendChild(el('h3', '', title));
    if (note) box.appendChild(el('p', 'origin', note));
    parent.appendChild(box);
    return box;
  }

  const say = function (box, text) {
    box.appendChild(el('p', 'empty', text));
  };

  /** One CDF per origin: the client's and the server's clocks are never one distribution. */
  function distributions(parent, title, unit, byOrigin, note, emptyWhy) {
    const origins = Object.keys(byOrigin).filter(function (o) { return byOrigin[o].length > 0; });
    const box = section(parent, title + ' (' + unit + ')', note);
    if (origins.length === 0) return say(box, emptyWhy || 'no values: the server answered with no such figure');
    origins.forEach(function (origin, i) {
      DB.cdf(box, { values: byOrigin[origin], unit: unit, label: 'origin: ' + origin, color: DB.COLORS[i % DB.COLORS.length] });
    });
  }

  // ---- The server --------------------------------------------------------------------------------
  const server = part('server-charts', 'Server', "The server's figures: per response on the client's receive clock (and on the server's own where it sent them), per session over its stream window.");
  distributions(server, 'TTFP per response', 'ms', data.responses.ttfp_ms, 'from the named origin to the first audio delta received');
  distributions(server, 'TTFT per response', 'ms', data.responses.ttft_ms, 'from the named origin to the first non-empty text or transcript delta received');
  distributions(server, 'RTF per response', 'ratio', data.responses.rtf, 'response.created received to the last audio delta received, over the response audio duration');
  distributions(server, 'TPOT per response', 'ms per token', data.responses.tpot_ms, "by its origin: the engine's own (vLLM-Omni stage 0) or the client's from server-sent token counts");

  // One point per session against its start: a server that slows under load shows as a rising cloud.
  const rows = data.rows.filter(function (r) { return r.start_s !== null; });
  let box = section(server, 'Each session: stream TTFP and longest output gap (ms) against its start (' + T + ')', 'client: per session, input start to the first audio received; the longest wait between two audio deltas of one response');
  if (!rows.some(function (r) { return r.stream_ttfp_ms !== null || r.output_gap_max_ms !== null; })) say(box, 'no session was answered with audio');
  else {
    const order = rows.slice().sort(function (a, b) { return a.start_s - b.start_s; });
    DB.plot(box, {
      x: order.map(function (r) { return r.start_s; }),
      xLabel: T,
      yLabel: 'ms',
      sync: true,
      series: [
        { label: 'stream TTFP', values: order.map(function (r) { return r.stream_ttfp_ms; }), points: true, size: 5 },
        { label: 'longest output gap', values: order.map(function (r) { return r.output_gap_max_ms; }), points: true, size: 5, color: '#ff7f0e' },
      ],
    });
  }
  distributions(server, 'Stream TTFP per session', 'ms', { 'client: input start (send of packet 0)': data.stream.ttfp_ms }, 'input stream start to the first audio received');
  distributions(server, 'Longest output gap per session', 'ms', { 'client receive times': data.stream.output_gap_max_ms }, 'longest wait between two audio deltas of one response');
  distributions(server, 'Stream RTF per session', 'ratio', { 'client: input start to the last audio, over all emitted audio': data.stream.rtf }, 'includes the concurrent realtime input');
  box = section(server, 'Playback underruns per session (count)', 'a player starting each response at its first delta plus an 80 ms prebuffer, running dry');
  if (data.stream.playback_underruns.length === 0) say(box, 'no session was answered with audio');
  else if (DB.allZero(data.stream.playback_underruns)) say(box, 'none: no simulated player ran dry in any of the ' + data.stream.playback_underruns.length + ' sessions');
  else DB.cdf(box, { values: data.stream.playback_underruns, unit: 'underruns', label: 'simulated player, 80 ms prebuffer' });

  // The server's own histograms (--server-metrics), on the run's time axis.
  const sm = data.server_metrics;
  if (sm) {
    box = section(
      server,
      "The server's own /metrics (" + sm.url + ')',
      "server: its histograms' bucket deltas (its clock, its buckets; linear within a bucket as PromQL's histogram_quantile) per scrape interval; " +
        sm.scrapes.ok + ' scrapes answered, ' + sm.scrapes.failed + ' failed' + (sm.scrapes.first_failure ? ' (first: ' + sm.scrapes.first_failure + ')' : ''),
    );
    if (sm.figures.length === 0) say(box, 'the server exported none of the latency histograms asked for');
    else {
      const ft = el('table', 'server-figures');
      const cells = function (tag, values) { return '<tr>' + values.map(function (v) { return '<' + tag + '>' + (v === null || v === undefined ? '-' : String(v).replace(/</g, '&lt;')) + '</' + tag + '>'; }).join('') + '</tr>'; };
      ft.innerHTML = cells('th', ['histogram', 'unit', 'n', 'p50', 'p90', 'p99', 'client, same kind']) + sm.figures.map(function (f) { return cells('td', [f.name, f.unit, f.count, f.p50, f.p90, f.p99, f.client]); }).join('');
      box.appendChild(ft);
    }
    sm.series.forEach(function (s) {
      box.appendChild(el('p', 'origin', s.name + ' per scrape interval (' + s.unit + ')'));
      if (s.t_s.length === 0) return say(box, 'no interval with an observation');
      DB.plot(box, { x: s.t_s, xLabel: T, yLabel: s.unit, height: 200, sync: true, series: [{ label: 'p50', values: s.p50 }, { label: 'p99', values: s.p99 }] });
    });
  }

  if (data.server_view) {
    box = section(server, "The server's view: arrival deviation (ms)", data.server_view.origin + ' (from ' + data.server_view.source + ')');
    const t = el('table');
    const a = data.server_view.arrival_deviation_ms;
    t.innerHTML = '<tr>' + Object.keys(a).map(function (k) { return '<th>' + k + '</th>'; }).join('') + '</tr><tr>' + Object.keys(a).map(function (k) { return '<td>' + (a[k] === null ? '-' : a[k]) + '</td>'; }).join('') + '</tr>';
    box.appendChild(t);
  }

  if (data.units) {
    box = section(server, data.units.title, data.units.origin);
    const ut = el('table');
    const f = data.units.figures;
    ut.innerHTML = '<tr>' + Object.keys(f).map(function (k) { return '<th>' + k + '</th>'; }).join('') + '</tr><tr>' + Object.keys(f).map(function (k) { return '<td>' + (f[k] === null ? '-' : f[k]) + '</td>'; }).join('') + '</tr>';
    box.appendChild(ut);
  }

  if (data.video) {
    box = section(server, data.video.title, data.video.origin);
    const vt = el('table');
    const v = data.video.figures;
    vt.innerHTML = '<tr>' + Object.keys(v).map(function (k) { return '<th>' + k + '</th>'; }).join('') + '</tr><tr>' + Object.keys(v).map(function (k) { return '<td>' + (v[k] === null ? '-' : v[k]) + '</td>'; }).join('') + '</tr>';
    box.appendChild(vt);
  }

  // ---- The client's own diagnostics ---------------------------------------------------------------
  const client = part('client-charts', 'Client diagnostics', "The probe's own health: whether it kept its cadence, and what its process was doing. None of these is a server figure.");
  const p = data.pacing;
  box = section(
    client,
    'Pacing deviation over time (ms, client send start; per ' + data.bin_s + ' s bin)',
    'client: |send start of packet N − (send start of packet 0 + N × ' + data.packet_ms + ' ms)| over every session; late = more than one packet interval (' + data.packet_ms + ' ms)',
  );
  if (p.t_s.length === 0) say(box, 'no packet was sent');
  else {
    const late = p.late.some(function (n) { return n > 0; });
    DB.plot(box, {
      x: p.t_s,
      xLabel: T,
      yLabel: 'ms',
      sync: true,
      series: [{ label: 'p50', values: p.p50_ms }, { label: 'p99', values: p.p99_ms }, { label: 'max', values: p.max_ms }].concat(
        late ? [{ label: 'late packets', values: p.late, axis: 'right', bars: true, axisLabel: 'late packets', color: '#000000' }] : [],
      ),
    });
    if (!late) say(box, 'no late packet: every packet went within one packet interval of its schedule');
  }

  // The other half of "the recording measures the server": how long a received frame waited before the client stamped it.
  box = section(client, 'Client receive delay (ms: server send stamp to client receive stamp)', "client: each received frame's receive stamp, taken in the socket's message handler, minus the server's send stamp on the same host's monotonic clock; it is added to every TTFT, TTFP and gap this run reports");
  const rd = data.receive_delay;
  const rdText = el('p', rd ? '' : 'empty', rd ? 'p50 ' + rd.p50 + ' ms, p99 ' + rd.p99 + ' ms, max ' + rd.max + ' ms over ' + rd.n + ' frames' : "the server stamps none of its frames (our mocks do with serve --stamp-sends): this client's own wait before it stamps a frame is not measured in this run");
  rdText.id = 'receive-delay';
  box.appendChild(rdText);

  box = section(client, 'Pacing deviation, cumulative (fraction of packets at or below; ms on a log axis)', 'client: every packet of every session; the largest is always drawn');
  if (data.cdf.length === 0) say(box, 'no packet was sent');
  else {
    DB.plot(box, {
      x: data.cdf.map(function (c) { return c[0]; }),
      xLabel: '|deviation| ms',
      xLog: true,
      yLabel: 'fraction ≤',
      height: 200,
      series: [{ label: 'fraction of packets', values: data.cdf.map(function (c) { return c[1]; }) }],
    });
  }

  // The client process on the same time axis.
  const tl = data.timelines;
  const axis = tl.length > 0 ? tl[0].t_s : [];
  const aligned = function (key) {
    // Processes share the first one's bins (one host clock); a shorter series is padded with nulls.
    return tl.map(function (t) {
      return { label: t.name, values: axis.map(function (_, i) { return i < t[key].length ? t[key][i] : null; }) };
    });
  };
  box = section(client, 'Client event-loop lag and GC pauses (ms, per 0.5 s bin)', 'client process: the longest lateness of a 10 ms timer in the bin; perf_hooks GC pauses starting in the bin, summed');
  if (tl.length === 0) say(box, 'no timeline.json: recorded by an older version');
  else {
    const lag = aligned('loop_lag_max_ms').map(function (s) { return { label: 'loop lag max ' + s.label, values: s.values }; });
    const gc = aligned('gc_pause_total_ms').map(function (s) { return { label: 'GC pauses ' + s.label, values: s.values, bars: true }; });
    DB.plot(box, { x: axis, xLabel: T, yLabel: 'ms', sync: true, series: lag.concat(gc) });
    box = section(client, 'Client CPU per process (cores, per 0.5 s bin)', 'client process: CPU seconds per wall second, sampled at the end of each bin');
    DB.plot(box, { x: axis, xLabel: T, yLabel: 'cores', sync: true, series: aligned('cpu_cores') });
    box = section(client, 'Trace backlog (bytes, sampled per 0.5 s bin)', 'client: trace and receipt bytes handed to the writer thread and not yet written');
    const backlog = aligned('trace_backlog_bytes');
    if (backlog.every(function (s) { return DB.allZero(s.values); })) say(box, 'none: the writer thread kept up, no byte ever waited at a sample');
    else DB.plot(box, { x: axis, xLabel: T, yLabel: 'bytes', sync: true, series: backlog });
  }

  if (data.stalls) {
    const st = data.stalls;
    const own = st.sampler ? st.sampler.looks + ' looks every ' + st.sampler.interval_ms + ' ms; the sampler\'s own CPU ' + st.sampler.cpu_cores + ' cores (its process, not the probe\'s)' : 'no sampler account';
    box = section(client, 'Client loop stalls over ' + st.threshold_ms + ' ms, each with its cause (--sampler)', st.measurement_origin + '; ' + own);
    if (st.count === 0) say(box, 'no stall over ' + st.threshold_ms + ' ms: the client\'s loop kept up');
    else {
      const causes = Object.keys(st.by_cause).filter(function (k) { return st.by_cause[k] > 0; }).map(function (k) { return k + ' ' + st.by_cause[k]; }).join(', ');
      box.appendChild(el('p', '', st.count + ' stall(s): ' + causes));
      const t = el('table', 'stalls');
      const esc = function (v) { return String(v === null || v === undefined ? '-' : v).replace(/</g, '&lt;'); };
      t.innerHTML =
        '<tr><th>s after the gate</th><th>ms</th><th>cause</th><th>GC ms</th><th>looks (states)</th><th>ran / waited ms</th><th>kernel function (D)</th></tr>' +
        st.list.slice(0, 100).map(function (x) {
          const e = x.evidence;
          const states = Object.keys(e.states).map(function (k) { return k + ' ' + e.states[k]; }).join(', ');
          return '<tr><td>' + esc(x.t_s) + '</td><td>' + esc(Math.round(x.ms)) + '</td><td>' + esc(x.cause) + '</td><td>' + esc(e.gc_ms) + '</td><td>' + esc(e.samples + (states ? ' (' + states + ')' : '')) + '</td><td>' + esc(e.run_ms) + ' / ' + esc(e.wait_ms) + '</td><td>' + esc(e.wchan.join(', ')) + '</td></tr>';
        }).join('');
      box.appendChild(t);
    }
  }

  // ---- Sessions, worst first ----------------------------------------------------------------------
  const columns = [
    ['process', 'process'],
    ['id', 'session'],
    ['completed', 'complete'],
    ['start_s', 'start s'],
    ['late', 'late packets'],
    ['playback_underruns', 'underruns'],
    ['output_gap_max_ms', 'longest gap ms'],
    ['stream_ttfp_ms', 'stream TTFP ms'],
    ['first_ttft_ms', 'first TTFT ms'],
    ['stream_rtf', 'stream RTF'],
    ['deviation_max_ms', '|deviation| max ms'],
    ['packets', 'packets'],
    ['responses', 'responses'],
    ['reason', 'reason'],
    ['message', 'recorded cause'],
  ].filter(function (c) { return c[0] !== 'process' || data.rows.some(function (r) { return r.process; }); });
  const table = document.getElementById('sessions');
  const head = el('tr');
  columns.forEach(function (c) {
    const th = el('th', '', c[1]);
    th.dataset.key = c[0];
    head.appendChild(th);
  });
  table.querySelector('thead').appendChild(head);
  const body = table.querySelector('tbody');
  const none = function (v) { return v === null || v === undefined; };
  /** Worst first: incomplete, then late packets, underruns, the longest gap, stream TTFP, first TTFT; a missing figure after any value. */
  const worst = function (a, b) {
    if (a.completed !== b.completed) return a.completed ? 1 : -1;
    const keys = ['late', 'playback_underruns', 'output_gap_max_ms', 'stream_ttfp_ms', 'first_ttft_ms'];
    for (let i = 0; i < keys.length; i++) {
      const x = a[keys[i]];
      const y = b[keys[i]];
      if (none(x) && none(y)) continue;
      if (none(x) || none(y)) return none(x) ? 1 : -1;
      if (x !== y) return y - x;
    }
    return 0;
  };
  let sortKey = null;
  let ascending = false;
  function fill() {
    const rowsNow = data.rows.slice().sort(
      sortKey === null
        ? worst
        : function (a, b) {
            const x = a[sortKey];
            const y = b[sortKey];
            const order = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
            return ascending ? order : -order;
          },
    );
    body.textContent = '';
    const frag = document.createDocumentFragment();
    rowsNow.forEach(function (r) {
      const tr = el('tr');
      if (!r.completed) tr.className = 'incomplete';
      columns.forEach(function (c) {
        const v = r[c[0]];
        tr.appendChild(el('td', '', v === null || v === undefined ? '-' : String(v)));
      });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
  }
  head.addEventListener('click', function (e) {
    const key = e.target.dataset && e.target.dataset.key;
    if (!key) return;
    ascending = key === sortKey ? !ascending : key === 'id' || key === 'process' || key === 'start_s';
    sortKey = key;
    fill();
  });
  fill();
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
