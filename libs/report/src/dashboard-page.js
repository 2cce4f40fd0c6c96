/* The live dashboard's own script (`--dashboard-port`): polls /live.json once a second and draws
 * the run so far: verdict boxes (pacing, sessions or requests, TTFP or TTFT so far, the client's
 * health), then sessions, packets per second, pacing and loop lag, latencies and memory over time.
 * Every figure is read from the families the run's /metrics serves (the same recorders). Needs
 * charts.js (window.DB). Talks only to the page's own origin. */
/* global DB, document, window, fetch */
(function () {
  'use strict';
  const el = DB.el;
  const T = 's since the dashboard started';
  const charts = {};
  let ended = false;

  const fixed = function (v, d) {
    return v === null || v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d);
  };
  const count = function (v) {
    return v === null || v === undefined ? '-' : Math.round(v).toLocaleString('en-US');
  };
  const value = function (row, name) {
    const v = row.values[name];
    return v === undefined ? null : v;
  };
  const hist = function (row, name, field) {
    const h = row.histograms[name];
    return h && h.n > 0 ? h[field] : null;
  };
  /** Per second over the rows: the difference of a counter between two looks, over their spacing. */
  const rate = function (rows, name) {
    return rows.map(function (row, i) {
      if (i === 0) return null;
      const a = value(rows[i - 1], name);
      const b = value(row, name);
      const dt = row.t_s - rows[i - 1].t_s;
      return a === null || b === null || !(dt > 0) ? null : (b - a) / dt;
    });
  };

  function box(id, cls, head, sub) {
    const b = el('div', 'verdict ' + cls);
    b.id = id;
    b.appendChild(el('div', 'head', head));
    if (sub) b.appendChild(el('div', 'sub', sub));
    return b;
  }

  /** The verdict boxes: redrawn whole at each look (a few elements). */
  function boxes(state, row) {
    const duplex = value(row, 'duplex_bench_packets_sent_total') !== null;
    const holder = document.getElementById('boxes');
    holder.textContent = '';
    const sent = duplex ? value(row, 'duplex_bench_packets_sent_total') : value(row, 'duplex_bench_requests_sent_total');
    const late = duplex ? value(row, 'duplex_bench_packets_late_total') : value(row, 'duplex_bench_requests_late_total');
    const unit = duplex ? 'packets' : 'requests';
    const pacingSub = duplex ? 'pacing p99 ' + fixed(hist(row, 'duplex_bench_pacing_deviation_seconds', 'p99'), 3) + ' ms, max ' + fixed(hist(row, 'duplex_bench_pacing_deviation_seconds', 'max'), 3) + ' ms (|send start − deadline|, client)' : 'requests sent late, past --max-send-lag-ms';
    const pacing = box('pacing', late ? 'bad' : 'ok', late ? count(late) + ' of ' + count(sent) + ' ' + unit + ' late: the client fell behind' : 'no late ' + unit.replace(/s$/, '') + ' so far: ' + count(sent) + ' sent', pacingSub);
    const sentNode = el('span', '', count(sent));
    sentNode.id = 'sent-count';
    sentNode.hidden = true;
    pacing.appendChild(sentNode);
    const reasons = row.labelled.duplex_bench_sessions_incomplete_total || row.labelled.duplex_bench_request_errors_total || {};
    const why = Object.keys(reasons)
      .filter(function (k) { return reasons[k] > 0; })
      .map(function (k) { return k.replace(/^[a-z_]+="(.*)"$/, '$1') + ' ' + count(reasons[k]); })
      .join(', ');
    const work = duplex
      ? box('sessions', value(row, 'duplex_bench_sessions_incomplete_total') ? 'bad' : 'ok', count(value(row, 'duplex_bench_sessions_active')) + ' sessions streaming', count(value(row, 'duplex_bench_sessions_completed_total')) + ' completed, ' + count(value(row, 'duplex_bench_sessions_incomplete_total')) + ' incomplete' + (why ? ' (' + why + ')' : ''))
      : box('requests', value(row, 'duplex_bench_request_errors_total') ? 'bad' : 'ok', count(value(row, 'duplex_bench_requests_in_flight')) + ' requests in flight', count(value(row, 'duplex_bench_requests_completed_total')) + ' completed' + (why ? '; errors: ' + why : ''));
    const lat = duplex ? 'duplex_bench_response_ttfp_seconds' : 'duplex_bench_request_ttft_seconds';
    const latency = box('latency', 'na', (duplex ? 'TTFP' : 'TTFT') + ' so far: p50 ' + fixed(hist(row, lat, 'p50'), 1) + ' ms, p99 ' + fixed(hist(row, lat, 'p99'), 1) + ' ms', 'n ' + count(row.histograms[lat] ? row.histograms[lat].n : 0) + (duplex ? ' responses so far, client (response.created received to the first audio)' : ', client (from the intended start)'));
    const lag = hist(row, 'duplex_bench_event_loop_lag_seconds', 'max');
    const rss = value(row, 'duplex_bench_resident_memory_bytes');
    const client = box('client', lag !== null && lag > 80 ? 'bad' : 'ok', 'client loop lag max ' + fixed(lag, 1) + ' ms', 'RSS ' + fixed(rss === null ? null : rss / 1048576, 0) + ' MiB; a stall here is the client, not the server');
    [pacing, work, latency, client].forEach(function (b) { holder.appendChild(b); });
    const banner = document.getElementById('verdict');
    if (state.verdict) {
      banner.className = 'verdict ' + (/^(QUALIFIED|LOCKSTEP)/.test(state.verdict) ? 'ok' : 'bad');
      banner.textContent = state.verdict;
    } else {
      banner.className = 'verdict na';
      banner.textContent = 'running: ' + fixed(row.t_s, 0) + ' s; figures so far, once a second';
    }
  }

  /** One chart per figure set, made at the first look and fed new columns at each look after. */
  function chart(key, title, yLabel, series) {
    const have = series.some(function (s) {
      return s.values.some(function (v) { return v !== null; });
    });
    if (!charts[key]) {
      if (!have) return;
      const section = el('section');
      section.id = 'chart-' + key;
      section.appendChild(el('h2', '', title));
      document.getElementById('charts').appendChild(section);
      charts[key] = DB.plot(section, { x: series.x, xLabel: T, yLabel: yLabel, sync: true, height: 200, series: series });
      return;
    }
    charts[key].setData([series.x].concat(series.map(function (s) { return s.values; })));
  }

  function draw(state) {
    const rows = state.rows;
    if (rows.length === 0) return;
    const row = rows[rows.length - 1];
    boxes(state, row);
    const x = rows.map(function (r) { return r.t_s; });
    const col = function (name) {
      return rows.map(function (r) { return value(r, name); });
    };
    const hcol = function (name, field) {
      return rows.map(function (r) { return hist(r, name, field); });
    };
    const withX = function (series) {
      series.x = x;
      return series;
    };
    if (value(row, 'duplex_bench_packets_sent_total') !== null) {
      chart('sessions', 'Sessions', 'sessions', withX([
        { label: 'streaming', values: col('duplex_bench_sessions_active'), color: '#1f77b4', width: 2 },
        { label: 'completed', values: col('duplex_bench_sessions_completed_total'), color: '#2ca02c' },
        { label: 'incomplete', values: col('duplex_bench_sessions_incomplete_total'), color: '#d62728' },
      ]));
      chart('packets', 'Packets sent per second, and late ones', 'packets/s', withX([
        { label: 'sent/s', values: rate(rows, 'duplex_bench_packets_sent_total'), color: '#1f77b4' },
        { label: 'late/s', values: rate(rows, 'duplex_bench_packets_late_total'), color: '#d62728', axis: 'right' },
      ]));
      chart('pacing', 'Pacing deviation p99 and client event-loop lag max, so far (client clock)', 'ms', withX([
        { label: 'pacing p99', values: hcol('duplex_bench_pacing_deviation_seconds', 'p99'), color: '#1f77b4' },
        { label: 'loop lag max', values: hcol('duplex_bench_event_loop_lag_seconds', 'max'), color: '#ff7f0e' },
      ]));
      chart('latency', 'TTFP and TTFT of the responses so far (client, from response.created received; each counted as it arrives)', 'ms', withX([
        { label: 'TTFP p50', values: hcol('duplex_bench_response_ttfp_seconds', 'p50'), color: '#2ca02c' },
        { label: 'TTFP p99', values: hcol('duplex_bench_response_ttfp_seconds', 'p99'), color: '#d62728' },
        { label: 'TTFT p99', values: hcol('duplex_bench_response_ttft_seconds', 'p99'), color: '#9467bd', dash: [6, 4] },
      ]));
    } else {
      chart('requests', 'Requests per second, and in flight', 'requests/s', withX([
        { label: 'sent/s', values: rate(rows, 'duplex_bench_requests_sent_total'), color: '#7f7f7f' },
        { label: 'completed/s', values: rate(rows, 'duplex_bench_requests_completed_total'), color: '#2ca02c' },
        { label: 'in flight', values: col('duplex_bench_requests_in_flight'), color: '#1f77b4', axis: 'right' },
      ]));
      chart('latency', 'TTFT and end to end, so far (client, from the intended start)', 'ms', withX([
        { label: 'TTFT p50', values: hcol('duplex_bench_request_ttft_seconds', 'p50'), color: '#2ca02c' },
        { label: 'TTFT p99', values: hcol('duplex_bench_request_ttft_seconds', 'p99'), color: '#d62728' },
        { label: 'E2E p99', values: hcol('duplex_bench_request_e2e_seconds', 'p99'), color: '#9467bd' },
      ]));
    }
    chart('client', 'Client memory (RSS) and CPU', 'MiB', withX([
      { label: 'RSS MiB', values: col('duplex_bench_resident_memory_bytes').map(function (v) { return v === null ? null : v / 1048576; }), color: '#8c564b' },
      { label: 'CPU cores', values: rate(rows, 'duplex_bench_cpu_seconds_total'), color: '#17becf', axis: 'right' },
    ]));
  }

  function poll() {
    fetch('live.json', { cache: 'no-store' })
      .then(function (res) { return res.json(); })
      .then(function (state) {
        document.getElementById('command').textContent = state.command;
        draw(state);
        ended = state.verdict !== null;
      })
      .catch(function () {
        const banner = document.getElementById('verdict');
        if (!ended) {
          banner.className = 'verdict na';
          banner.textContent = 'the dashboard is not answering: the run has ended (its summary is in its output directory)';
        }
        ended = true;
      })
      .then(function () {
        window.setTimeout(poll, 1000);
      });
  }
  poll();
})();
