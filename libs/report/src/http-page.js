/* The http page's own script: requests and tokens per second over the run, offered against
 * achieved; TTFT, E2E and TPOT of each request against its intended start, each in its own panel;
 * the distributions of TTFT, E2E, TPOT and ITL (per chunk); the client's send lag with its bound.
 * Every time chart on one cursor. Runs in the browser; no network. Needs charts.js (window.DB). */
/* global DB, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const s = data.summary;
  const r = data.requests;
  const el = DB.el;
  const T = 's since the first intended start';
  const origin = s.measurement_origin;
  const sampled = data.drawn && data.drawn.every > 1 ? ' (every ' + data.drawn.every + 'th of ' + data.drawn.of + ' requests drawn; the table holds all)' : '';

  function section(title, note) {
    const box = el('section');
    box.appendChild(el('h2', '', title));
    if (note) box.appendChild(el('p', 'origin', note));
    document.getElementById('charts').appendChild(box);
    return box;
  }
  const say = function (box, text) {
    box.appendChild(el('p', 'empty', text));
  };

  // Throughput over time: what the schedule offered against what the server finished.
  const tl = s.timeline;
  let box = section('Requests per second over the run: offered (intended starts) against completed and failed', origin.timeline || '');
  if (!tl || tl.offered.length === 0) say(box, 'no per-second counts in this summary');
  else {
    const x = tl.offered.map(function (_, i) { return i + 0.5; });
    DB.plot(box, {
      x: x,
      xLabel: T,
      yLabel: 'requests/s',
      sync: true,
      series: [
        { label: 'offered', values: tl.offered, color: '#7f7f7f', dash: [6, 4] },
        { label: 'completed', values: tl.completed, color: '#2ca02c', width: 2 },
      ].concat(DB.allZero(tl.failed) ? [] : [{ label: 'failed', values: tl.failed, color: '#d62728' }]),
    });
    if (DB.allZero(tl.failed)) say(box, 'no request failed');
    box = section('Output per second over the run', 'output chunks by their arrival (what vLLM counts as tokens per second); output tokens of each request counted in the second it ended');
    DB.plot(box, {
      x: x,
      xLabel: T,
      yLabel: 'per second',
      sync: true,
      series: [
        { label: 'output chunks/s', values: tl.output_chunks, color: '#1f77b4' },
        { label: 'output tokens/s (at each request end)', values: tl.output_tokens, color: '#ff7f0e' },
      ],
    });
  }

  /** One figure of each request against its intended start, in a panel of its own. */
  function perRequest(title, note, values, color) {
    const b = section(title + sampled, note);
    const have = values.some(function (v) { return v !== null; });
    if (!have) return say(b, 'no request recorded this figure');
    DB.plot(b, { x: r.intended_s, xLabel: T, yLabel: 'ms', sync: true, height: 220, series: [{ label: title.split(',')[0], values: values, points: true, size: 4, color: color }] });
  }
  perRequest('TTFT of each request, ms', origin.ttft || '', r.ttft_ms, '#1f77b4');
  perRequest('E2E of each request, ms', origin.e2e || '', r.e2e_ms, '#ff7f0e');
  perRequest('TPOT of each request, ms', origin.tpot || '', r.tpot_ms, '#9467bd');

  // The distributions, each on its own axis.
  const dist = function (title, note, values, unit) {
    const b = section(title, note + sampled);
    const v = values.filter(function (x) { return x !== null; });
    if (v.length === 0) return say(b, 'no values');
    DB.cdf(b, { values: v, unit: unit });
  };
  dist('TTFT, cumulative (ms)', 'every completed request', r.ttft_ms, 'ms');
  dist('E2E, cumulative (ms)', 'every completed request', r.e2e_ms, 'ms');
  dist('TPOT, cumulative (ms per token)', 'every completed request of two or more tokens', r.tpot_ms, 'ms');
  box = section('ITL (between output chunks), cumulative (ms)', origin.itl || '');
  if (data.itl_cdf.length === 0) say(box, 'no request had two output chunks');
  else {
    const l = s.latency_ms.itl.raw;
    box.appendChild(el('p', 'caption', 'n ' + l.count + ' chunk gaps, p50 ' + l.p50 + ' ms, p99 ' + l.p99 + ' ms, max ' + l.max + ' ms (HDR histogram, 3 significant digits)'));
    DB.plot(box, {
      x: data.itl_cdf.map(function (c) { return c[0]; }),
      xLabel: 'ms',
      yLabel: 'fraction ≤',
      height: 200,
      yRange: function () { return [0, 1.02]; },
      series: [{ label: 'fraction of chunk gaps at or below', values: data.itl_cdf.map(function (c) { return c[1]; }), step: true }],
      rules: [
        { x: l.p50, label: 'p50 ' + l.p50, color: '#2ca02c' },
        { x: l.p99, label: 'p99 ' + l.p99, color: '#d62728' },
      ],
    });
  }

  const bound = s.client.max_send_lag_ms;
  box = section("The client's send lag of each request, ms (undici's start − the time the client let it go); over the dashed bound the run is unqualified", origin.send_lag_ms || '');
  if (r.intended_s.length === 0) say(box, 'no request recorded');
  else DB.plot(box, { x: r.intended_s, xLabel: T, yLabel: 'ms', sync: true, height: 220, series: [{ label: 'send lag', values: r.send_lag_ms, points: true, size: 4, color: '#2ca02c' }], hrules: [{ y: bound, label: 'bound ' + bound + ' ms' }], yRange: function (u, min, max) { return [0, Math.max(max, bound) * 1.1]; } });
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
