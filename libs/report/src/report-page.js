/* The report page's own script: reads the inlined data, draws every chart with uPlot and fills the
 * sessions table. Runs in the browser; no network. */
/* global uPlot, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  const width = () => Math.min(1100, document.body.clientWidth - 40);

  function section(title, note) {
    const box = document.createElement('section');
    const h = document.createElement('h2');
    h.textContent = title;
    box.appendChild(h);
    if (note) {
      const p = document.createElement('p');
      p.className = 'origin';
      p.textContent = note;
      box.appendChild(p);
    }
    document.getElementById('charts').appendChild(box);
    return box;
  }

  function empty(box, why) {
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = why;
    box.appendChild(p);
  }

  /** A time or value chart: x values, then series [{label, values, axis, bars}]. */
  function chart(box, opts) {
    const el = document.createElement('div');
    el.className = 'chart';
    box.appendChild(el);
    const series = [{ label: opts.xLabel }];
    const columns = [opts.x];
    const axes = [{ label: opts.xLabel, stroke: '#333' }, { label: opts.yLabel, stroke: '#333', size: 60 }];
    const scales = { x: opts.xLog ? { time: false, distr: 3 } : { time: false } };
    if (opts.yLog) scales.y = { distr: 3 };
    let right = false;
    opts.series.forEach(function (s, i) {
      const color = s.color || COLORS[i % COLORS.length];
      const one = { label: s.label, stroke: color, width: 1.5, scale: s.axis === 'right' ? 'right' : 'y' };
      if (s.bars) {
        one.paths = uPlot.paths.bars({ size: [0.8, 40] });
        one.fill = color + '88';
      }
      if (s.points) {
        one.paths = function () {
          return null;
        };
        one.points = { show: true, size: 6, stroke: color, fill: color };
      }
      if (s.axis === 'right') right = s.axisLabel || s.label;
      series.push(one);
      columns.push(s.values);
    });
    if (right) {
      scales.right = { auto: true };
      axes.push({ label: right, scale: 'right', side: 1, stroke: '#333', grid: { show: false }, size: 60 });
    }
    return new uPlot({ width: width(), height: opts.height || 260, series: series, axes: axes, scales: scales, legend: { live: true } }, columns, el);
  }

  /** Equal-width bins of `values`: centres and counts. */
  function histogram(values, bins) {
    let min = Infinity;
    let max = -Infinity;
    values.forEach(function (v) {
      if (v < min) min = v;
      if (v > max) max = v;
    });
    if (max === min) max = min + 1;
    const step = (max - min) / bins;
    const counts = new Array(bins).fill(0);
    values.forEach(function (v) {
      counts[Math.min(bins - 1, Math.floor((v - min) / step))]++;
    });
    return { x: counts.map(function (_, i) { return min + (i + 0.5) * step; }), counts: counts };
  }

  function distributions(title, unit, byOrigin, note) {
    const box = section(title + ' (' + unit + ')', note);
    const origins = Object.keys(byOrigin).filter(function (o) { return byOrigin[o].length > 0; });
    if (origins.length === 0) return empty(box, 'no values: the server answered with no such figure');
    // One chart per origin: the client's and the server's clocks are never one distribution.
    origins.forEach(function (origin, i) {
      const values = byOrigin[origin];
      const h = histogram(values, Math.min(40, Math.max(5, Math.ceil(Math.sqrt(values.length)))));
      const label = document.createElement('p');
      label.className = 'origin';
      label.textContent = 'origin: ' + origin + ' (n ' + values.length + ')';
      box.appendChild(label);
      chart(box, { x: h.x, xLabel: unit, yLabel: 'responses', height: 200, series: [{ label: 'responses', values: h.counts, bars: true, color: COLORS[i % COLORS.length] }] });
    });
  }

  // Pacing over time.
  const p = data.pacing;
  let box = section(
    'Pacing deviation over time (ms, client send start; per ' + data.bin_s + ' s bin since the first packet)',
    'client: |send start of packet N − (send start of packet 0 + N × ' + data.packet_ms + ' ms)| over every session; late = more than one packet interval (' + data.packet_ms + ' ms)',
  );
  if (p.t_s.length === 0) empty(box, 'no packet was sent');
  else {
    chart(box, {
      x: p.t_s,
      xLabel: 's since the first packet',
      yLabel: 'ms',
      series: [
        { label: 'p50', values: p.p50_ms },
        { label: 'p99', values: p.p99_ms },
        { label: 'max', values: p.max_ms },
        { label: 'late packets', values: p.late, axis: 'right', bars: true, axisLabel: 'late packets', color: '#000000' },
      ],
    });
  }

  // The server's own histograms (--server-metrics), on the same time axis as the client's pacing.
  const sm = data.server_metrics;
  if (sm) {
    box = section(
      'The server\'s own /metrics (' + sm.url + ')',
      'server: its histograms\' bucket deltas (its clock, its buckets; linear within a bucket as PromQL\'s histogram_quantile), over the run beside the client\'s figure of the same kind, then per scrape interval; ' +
        sm.scrapes.ok + ' scrapes answered, ' + sm.scrapes.failed + ' failed' + (sm.scrapes.first_failure ? ' (first: ' + sm.scrapes.first_failure + ')' : ''),
    );
    if (sm.figures.length === 0) empty(box, 'the server exported none of the latency histograms asked for');
    else {
      const ft = document.createElement('table');
      ft.className = 'server-figures';
      const cells = function (tag, values) { return '<tr>' + values.map(function (v) { return '<' + tag + '>' + (v === null || v === undefined ? '-' : String(v).replace(/</g, '&lt;')) + '</' + tag + '>'; }).join('') + '</tr>'; };
      ft.innerHTML = cells('th', ['histogram', 'unit', 'n', 'p50', 'p90', 'p99', 'client, same kind']) + sm.figures.map(function (f) { return cells('td', [f.name, f.unit, f.count, f.p50, f.p90, f.p99, f.client]); }).join('');
      box.appendChild(ft);
      sm.series.forEach(function (s) {
        const label = document.createElement('p');
        label.className = 'origin';
        label.textContent = s.name + ' per scrape interval (' + s.unit + '; s since the first packet)';
        box.appendChild(label);
        if (s.t_s.length === 0) return empty(box, 'no interval with an observation');
        chart(box, { x: s.t_s, xLabel: 's since the first packet', yLabel: s.unit, height: 200, series: [{ label: 'p50', values: s.p50 }, { label: 'p99', values: s.p99 }] });
      });
    }
  }

  box = section('Pacing deviation, cumulative (fraction of packets at or below; ms on a log axis)', 'client: every packet of every session; the largest is always drawn');
  if (data.cdf.length === 0) empty(box, 'no packet was sent');
  else {
    chart(box, {
      x: data.cdf.map(function (c) { return c[0]; }),
      xLabel: '|deviation| ms',
      xLog: true,
      yLabel: 'fraction',
      series: [{ label: 'fraction of packets', values: data.cdf.map(function (c) { return c[1]; }) }],
    });
  }

  // The client process on the same time axis.
  const tl = data.timelines;
  const per = function (key) {
    return tl.map(function (t) { return { label: t.name, values: t[key] }; });
  };
  const axis = tl.length > 0 ? tl[0].t_s : [];
  const aligned = function (key) {
    // Processes share the first one's bins (one host clock); a shorter series is padded with nulls.
    return per(key).map(function (s) {
      return { label: s.label, values: axis.map(function (_, i) { return i < s.values.length ? s.values[i] : null; }) };
    });
  };
  box = section('Client event-loop lag and GC pauses (ms, per 0.5 s bin)', 'client process: the longest lateness of a 10 ms timer in the bin; perf_hooks GC pauses starting in the bin, summed');
  if (tl.length === 0) empty(box, 'no timeline.json: recorded by an older version');
  else {
    const lag = aligned('loop_lag_max_ms').map(function (s) { return { label: 'loop lag max ' + s.label, values: s.values }; });
    const gc = aligned('gc_pause_total_ms').map(function (s) { return { label: 'GC pauses ' + s.label, values: s.values, bars: true }; });
    chart(box, { x: axis, xLabel: 's since the first packet', yLabel: 'ms', series: lag.concat(gc) });
    const cpuBox = section('Client CPU per process (cores, per 0.5 s bin)', 'client process: CPU seconds per wall second, sampled at the end of each bin');
    chart(cpuBox, { x: axis, xLabel: 's since the first packet', yLabel: 'cores', series: aligned('cpu_cores') });
    const backlogBox = section('Trace backlog (bytes, sampled per 0.5 s bin)', 'client: trace and receipt bytes handed to the writer thread and not yet written');
    chart(backlogBox, { x: axis, xLabel: 's since the first packet', yLabel: 'bytes', series: aligned('trace_backlog_bytes') });
  }

  if (data.stalls) {
    const st = data.stalls;
    const own = st.sampler ? st.sampler.looks + ' looks every ' + st.sampler.interval_ms + ' ms; the sampler\'s own CPU ' + st.sampler.cpu_cores + ' cores (its process, not the probe\'s)' : 'no sampler account';
    box = section('Client loop stalls over ' + st.threshold_ms + ' ms, each with its cause (--sampler)', st.measurement_origin + '; ' + own);
    if (st.count === 0) empty(box, 'no stall over ' + st.threshold_ms + ' ms: the client\'s loop kept up');
    else {
      const causes = Object.keys(st.by_cause).filter(function (k) { return st.by_cause[k] > 0; }).map(function (k) { return k + ' ' + st.by_cause[k]; }).join(', ');
      const p = document.createElement('p');
      p.textContent = st.count + ' stall(s): ' + causes;
      box.appendChild(p);
      const t = document.createElement('table');
      t.className = 'stalls';
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

  if (data.server_view) {
    box = section('The server\'s view: arrival deviation (ms)', data.server_view.origin + ' (from ' + data.server_view.source + ')');
    const t = document.createElement('table');
    const a = data.server_view.arrival_deviation_ms;
    t.innerHTML = '<tr>' + Object.keys(a).map(function (k) { return '<th>' + k + '</th>'; }).join('') + '</tr><tr>' + Object.keys(a).map(function (k) { return '<td>' + (a[k] === null ? '-' : a[k]) + '</td>'; }).join('') + '</tr>';
    box.appendChild(t);
  }

  if (data.units) {
    box = section(data.units.title, data.units.origin);
    const ut = document.createElement('table');
    const f = data.units.figures;
    ut.innerHTML = '<tr>' + Object.keys(f).map(function (k) { return '<th>' + k + '</th>'; }).join('') + '</tr><tr>' + Object.keys(f).map(function (k) { return '<td>' + (f[k] === null ? '-' : f[k]) + '</td>'; }).join('') + '</tr>';
    box.appendChild(ut);
  }

  distributions('TTFT per response', 'ms', data.responses.ttft_ms, 'from the named origin to the first non-empty text or transcript delta received');
  distributions('TTFP per response', 'ms', data.responses.ttfp_ms, 'from the named origin to the first audio delta received');
  distributions('RTF per response', 'ratio', data.responses.rtf, 'response.created received to the last audio delta received, over the response audio duration');
  distributions('TPOT per response', 'ms per token', data.responses.tpot_ms, 'by its origin: the engine\'s own (vLLM-Omni stage 0) or the client\'s from server-sent token counts');
  distributions('Stream window per session', 'ms', { 'TTFP from input start (client)': data.stream.ttfp_ms }, 'input stream start (send of packet 0) to the first audio received');
  distributions('Stream RTF per session', 'ratio', { 'input start to last audio over all emitted audio (client)': data.stream.rtf }, 'includes concurrent realtime input');
  distributions('Longest output gap per session', 'ms', { 'client receive times': data.stream.output_gap_max_ms }, 'longest wait between two audio deltas of one response');
  distributions('Playback underruns per session', 'count', { 'simulated player, 80 ms prebuffer': data.stream.playback_underruns }, 'a player starting each response at its first delta plus the prebuffer, running dry');

  // Sessions table, sortable by any column.
  const columns = [
    ['process', 'process'],
    ['id', 'session'],
    ['completed', 'complete'],
    ['packets', 'packets'],
    ['late', 'late'],
    ['deviation_max_ms', '|deviation| max ms'],
    ['stream_ttfp_ms', 'stream TTFP ms'],
    ['stream_rtf', 'stream RTF'],
    ['responses', 'responses'],
    ['reason', 'reason'],
    ['message', 'recorded cause'],
  ].filter(function (c) { return c[0] !== 'process' || data.rows.some(function (r) { return r.process; }); });
  const table = document.getElementById('sessions');
  const head = document.createElement('tr');
  columns.forEach(function (c) {
    const th = document.createElement('th');
    th.textContent = c[1];
    th.dataset.key = c[0];
    head.appendChild(th);
  });
  table.querySelector('thead').appendChild(head);
  const body = table.querySelector('tbody');
  let sortKey = 'id';
  let ascending = true;
  function fill() {
    const rows = data.rows.slice().sort(function (a, b) {
      const x = a[sortKey];
      const y = b[sortKey];
      const order = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
      return ascending ? order : -order;
    });
    body.textContent = '';
    const frag = document.createDocumentFragment();
    rows.forEach(function (r) {
      const tr = document.createElement('tr');
      if (!r.completed) tr.className = 'incomplete';
      columns.forEach(function (c) {
        const td = document.createElement('td');
        const v = r[c[0]];
        td.textContent = v === null || v === undefined ? '-' : String(v);
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
  }
  head.addEventListener('click', function (e) {
    const key = e.target.dataset && e.target.dataset.key;
    if (!key) return;
    ascending = key === sortKey ? !ascending : key === 'id' || key === 'process';
    sortKey = key;
    fill();
  });
  fill();
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
