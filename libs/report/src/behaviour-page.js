/* A conversation run's behaviour, on the run page: one session's timeline (user speech, model
 * speech, protocol events, each behaviour marked with its outcome), the distribution of each
 * latency, and the takeover and yield rates with their intervals. Runs in the browser, before
 * report-page.js; no network. */
/* global uPlot, DB, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const b = data.behaviour;
  const root = document.getElementById('behaviour');
  if (!b || !root) return;
  const origin = b.summary.measurement_origin || {};
  const width = function () { return Math.min(1100, document.body.clientWidth - 40); };
  const COLOR = {
    utterance: '#1f77b4',
    'barge-in': '#9467bd',
    backchannel: '#ff7f0e',
    pause: '#c7c7c7',
    model: '#2ca02c',
    event: '#555555',
    expected: '#222222',
    unexpected: '#d62728',
    neutral: '#8c8c8c',
    cancel: '#17becf',
  };

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function section(title, note, id) {
    const box = el('section');
    if (id) box.id = id;
    box.appendChild(el('h2', '', title));
    if (note) box.appendChild(el('p', 'origin', note));
    root.appendChild(box);
    return box;
  }

  const num = function (v, digits) { return v === null || v === undefined ? '-' : String(Math.round(v * Math.pow(10, digits)) / Math.pow(10, digits)); };
  const counts = function (o) {
    const k = Object.keys(o || {});
    return k.length === 0 ? 'none' : k.map(function (n) { return n.replace(/_/g, ' ') + ' ' + o[n]; }).join(', ');
  };

  // ---- One session's timeline ----------------------------------------------------------------
  // Rows on a fixed 0-10 value axis, drawn on uPlot's canvas so its x axis zooms (drag) and resets (double-click).
  const ROW = { user: 9.1, model: 7.5, events: 5.9, behaviours: 2.6 };
  const LANES = [3.9, 2.6, 1.3];
  const BAR = 0.75;
  const NAMES = {};
  NAMES[ROW.user] = 'user speech';
  NAMES[ROW.model] = 'model speech';
  NAMES[ROW.events] = 'protocol events';
  NAMES[ROW.behaviours] = 'behaviours';

  function drawRows(u, t) {
    const ctx = u.ctx;
    const pr = window.devicePixelRatio || 1;
    const x = function (s) { return u.valToPos(s, 'x', true); };
    const y = function (v) { return u.valToPos(v, 'y', true); };
    const h = function (v) { return Math.abs(y(0) - y(v)); };
    const box = u.bbox;
    const right = box.left + box.width;
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.left, box.top, box.width, box.height);
    ctx.clip();
    ctx.font = 11 * pr + 'px system-ui, sans-serif';
    // uPlot leaves its axes' alignment on the context.
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    // Faint row separators.
    ctx.strokeStyle = '#eeeeee';
    ctx.lineWidth = pr;
    [8.3, 6.7, 4.9].forEach(function (v) {
      ctx.beginPath();
      ctx.moveTo(box.left, y(v));
      ctx.lineTo(box.left + box.width, y(v));
      ctx.stroke();
    });
    const bar = function (from, to, row, color, outline) {
      const x0 = x(from);
      const w = Math.max(pr, x(to) - x0);
      const top = y(row + BAR / 2);
      if (outline) {
        ctx.fillStyle = color;
        ctx.fillRect(x0, top, w, h(BAR));
        ctx.strokeStyle = outline;
        ctx.strokeRect(x0, top, w, h(BAR));
      } else {
        ctx.fillStyle = color;
        ctx.fillRect(x0, top, w, h(BAR));
      }
    };
    t.pauses.forEach(function (p) { bar(p.from_s, p.to_s, ROW.user, COLOR.pause + '88', '#999999'); });
    t.user.forEach(function (s) { bar(s.from_s, s.to_s, ROW.user, COLOR[s.role]); });
    t.model.forEach(function (m) { bar(m[0], m[1], ROW.model, COLOR.model); });

    // Protocol events: a tick each, its name beside it when there is room (two lanes).
    const laneEnds = [-Infinity, -Infinity];
    t.events.forEach(function (e) {
      const ex = x(e.t_s);
      ctx.strokeStyle = /cancel|listen/.test(e.label) ? COLOR.cancel : COLOR.event;
      ctx.lineWidth = 1.5 * pr;
      ctx.beginPath();
      ctx.moveTo(ex, y(ROW.events + 0.7));
      ctx.lineTo(ex, y(ROW.events - 0.7));
      ctx.stroke();
      const text = e.label.replace(/^response\./, '');
      const w = ctx.measureText(text).width;
      // Beside the tick, on its left when the right edge would cut it.
      const tx = ex + 3 * pr + w > right ? ex - 3 * pr - w : ex + 3 * pr;
      for (let lane = 0; lane < laneEnds.length; lane++) {
        if (tx > laneEnds[lane]) {
          ctx.fillStyle = ctx.strokeStyle;
          ctx.fillText(text, tx, y(ROW.events + (lane === 0 ? 0.2 : -0.55)));
          laneEnds[lane] = tx + w + 6 * pr;
          break;
        }
      }
    });

    // Behaviours: each on the first lane free of the ones before it, its interval with end caps and its label above.
    const ends = LANES.map(function () { return -Infinity; });
    t.behaviours.forEach(function (ev) {
      const color = ev.expected === true ? COLOR.expected : ev.expected === false ? COLOR.unexpected : COLOR.neutral;
      const x0 = x(ev.from_s);
      const x1 = x(ev.to_s);
      const w = ctx.measureText(ev.label).width;
      // The label starts over the interval, and ends at the right edge when it would run past it.
      const lx = Math.max(box.left, Math.min(x0, right - w));
      let lane = ends.findIndex(function (end) { return Math.min(x0, lx) > end; });
      const labelled = lane >= 0;
      if (!labelled) lane = ends.indexOf(Math.min.apply(null, ends));
      const ly = y(LANES[lane]);
      ends[lane] = Math.max(x1, labelled ? lx + w : x1) + 8 * pr;
      // Guides up to the rows the interval runs between.
      ctx.strokeStyle = '#bbbbbb';
      ctx.lineWidth = pr;
      ctx.setLineDash([2 * pr, 3 * pr]);
      [x0, x1].forEach(function (gx) {
        ctx.beginPath();
        ctx.moveTo(gx, ly);
        ctx.lineTo(gx, y(ROW.user - BAR / 2));
        ctx.stroke();
      });
      ctx.setLineDash([]);
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 2 * pr;
      if (x1 - x0 < 2 * pr) {
        // No interval (no response, model not speaking): a diamond.
        ctx.beginPath();
        ctx.moveTo(x0, ly - 5 * pr);
        ctx.lineTo(x0 + 5 * pr, ly);
        ctx.lineTo(x0, ly + 5 * pr);
        ctx.lineTo(x0 - 5 * pr, ly);
        ctx.closePath();
        ctx.fill();
      } else {
        ctx.beginPath();
        ctx.moveTo(x0, ly - 5 * pr);
        ctx.lineTo(x0, ly + 5 * pr);
        ctx.moveTo(x0, ly);
        ctx.lineTo(x1, ly);
        ctx.stroke();
        // An arrow head for a latency (it runs from the user to the model), a cap for a pause or a backchannel.
        ctx.beginPath();
        if (ev.kind === 'response' || ev.kind === 'stop') {
          ctx.moveTo(x1, ly);
          ctx.lineTo(x1 - 7 * pr, ly - 4 * pr);
          ctx.lineTo(x1 - 7 * pr, ly + 4 * pr);
          ctx.closePath();
          ctx.fill();
        } else {
          ctx.moveTo(x1, ly - 5 * pr);
          ctx.lineTo(x1, ly + 5 * pr);
          ctx.stroke();
        }
      }
      if (ev.cancel_s !== undefined) {
        const cx = x(ev.cancel_s);
        ctx.strokeStyle = COLOR.cancel;
        ctx.beginPath();
        ctx.moveTo(cx - 4 * pr, ly - 4 * pr);
        ctx.lineTo(cx + 4 * pr, ly + 4 * pr);
        ctx.moveTo(cx + 4 * pr, ly - 4 * pr);
        ctx.lineTo(cx - 4 * pr, ly + 4 * pr);
        ctx.stroke();
      }
      if (labelled) {
        ctx.fillStyle = color;
        ctx.fillText(ev.label, lx, ly - 8 * pr);
      }
    });
    ctx.restore();
  }

  function legend(box) {
    const p = el('p', 'legend');
    [
      ['utterance', COLOR.utterance],
      ['barge-in', COLOR['barge-in']],
      ['backchannel', COLOR.backchannel],
      ['pause (silence step)', '#dddddd'],
      ['model speech', COLOR.model],
      ['behaviour as expected', COLOR.expected],
      ['behaviour not as expected', COLOR.unexpected],
      ['cancel evidence', COLOR.cancel],
    ].forEach(function (item) {
      const sw = el('span', 'swatch');
      sw.style.background = item[1];
      p.appendChild(sw);
      p.appendChild(el('span', 'key', item[0]));
    });
    box.appendChild(p);
  }

  const timelineBox = section(
    "One session's timeline (s since the session's first packet, client monotonic clock)",
    "user speech: each utterance from its first to its last speech-level sample (the send start of the sample's packet plus its offset in it); model speech: the spans the figures read; protocol events: as the client received them; behaviours: the interval each figure reads, with its outcome. Drag across the chart to zoom, double-click to reset.",
    'timeline',
  );
  if (b.timelines.length === 0) {
    timelineBox.appendChild(el('p', 'empty', 'no speech.jsonl: the run was recorded by an older version; the figures below are from turns.jsonl and the summary'));
  } else {
    const pick = el('p', 'meta');
    const label = el('label', '', 'Session ');
    const select = el('select');
    select.id = 'timeline-session';
    b.timelines.forEach(function (t, i) {
      const resp = t.behaviours.filter(function (ev) { return ev.kind === 'response' && ev.latency_ms !== null; });
      const opt = el('option', '', (t.process ? t.process + '/' : '') + t.session + ' (' + t.behaviours.length + ' behaviour events' + (resp.length ? ', ' + resp.length + ' responses' : '') + ')');
      opt.value = String(i);
      select.appendChild(opt);
    });
    select.value = String(b.shown);
    label.appendChild(select);
    pick.appendChild(label);
    const why = el('span', 'why');
    why.id = 'timeline-why';
    pick.appendChild(why);
    timelineBox.appendChild(pick);
    legend(timelineBox);
    const chartEl = el('div', 'chart');
    chartEl.id = 'timeline-chart';
    timelineBox.appendChild(chartEl);
    const table = el('table');
    table.id = 'timeline-events';
    timelineBox.appendChild(table);
    let plot = null;
    const show = function (i) {
      const t = b.timelines[i];
      const name = (t.process ? t.process + '/' : '') + t.session;
      why.textContent =
        ' ' +
        (i === b.shown ? 'shown: ' + name + ', ' + b.shown_why : 'shown: ' + name + ', chosen here') +
        '. Model speech from ' + (t.model_speech === 'vad' ? 'the VAD' : 'the live energy estimate (its VAD failed)') + '. ' +
        b.timelines.length + ' of ' + b.sessions_with_speech + ' sessions can be chosen.';
      if (plot) plot.destroy();
      const pad = Math.max(0.05, t.end_s * 0.01);
      plot = new uPlot(
        {
          width: width(),
          height: 340,
          legend: { show: false },
          cursor: { y: false, points: { show: false }, drag: { x: true, y: false } },
          scales: { x: { time: false }, y: { auto: false, range: [0, 10] } },
          axes: [
            { label: "s since the session's first packet", stroke: '#333' },
            {
              stroke: '#333',
              size: 110,
              grid: { show: false },
              ticks: { show: false },
              splits: function () { return [ROW.behaviours, ROW.events, ROW.model, ROW.user]; },
              values: function (u, splits) { return splits.map(function (v) { return NAMES[v] || ''; }); },
            },
          ],
          series: [{ label: 's' }, { label: 'rows', stroke: 'transparent', points: { show: false } }],
          hooks: { draw: [function (u) { drawRows(u, t); }] },
        },
        // A little room either side: events at the first packet and at the end stay visible.
        [[-pad, Math.max(t.end_s, 0.001) + pad], [null, null]],
        chartEl,
      );
      const head = ['pass.step', 'kind', 'outcome', 'from s', 'to s', 'latency ms', 'label'];
      table.textContent = '';
      const hr = el('tr');
      head.forEach(function (c) { hr.appendChild(el('th', '', c)); });
      table.appendChild(hr);
      t.behaviours.forEach(function (ev) {
        const tr = el('tr', ev.expected === false ? 'incomplete' : '');
        [ev.pass + '.' + ev.step, ev.kind, ev.outcome.replace(/_/g, ' '), num(ev.from_s, 3), num(ev.to_s, 3), num(ev.latency_ms, 1), ev.label].forEach(function (c) { tr.appendChild(el('td', '', c)); });
        table.appendChild(tr);
      });
    };
    select.addEventListener('change', function () { show(Number(select.value)); });
    show(b.shown);
  }

  // ---- Distributions of each latency --------------------------------------------------------------
  const LATENCIES = [
    ['response_latency_ms', 'Response latency', 'responses', 'no response was answered within its listen'],
    ['stop_latency_ms', 'Stop latency', 'barge-ins', 'no barge-in found the model speaking and saw it stop'],
    ['cancel_latency_ms', 'Cancel latency', 'barge-ins', 'the dialect gave no cancel evidence (response cancelled or listen) after any barge-in: a native model says it only by going quiet'],
  ];
  LATENCIES.forEach(function (l) {
    const key = l[0];
    const d = b.distributions[key];
    const s = b.summary[key];
    const box = section(l[1] + ' per event (ms), n ' + d.count, 'origin: ' + (origin[key] || '-'), 'dist-' + key);
    box.appendChild(
      el('p', 'meta', 'summary (pooled HDR histogram): p50 ' + num(s.p50, 1) + ' ms, p90 ' + num(s.p90, 1) + ' ms, p95 ' + num(s.p95, 1) + ' ms, p99 ' + num(s.p99, 1) + ' ms, max ' + num(s.max, 1) + ' ms (n ' + s.count + '); outcomes: ' + counts(d.outcomes)),
    );
    if (d.count === 0) {
      box.appendChild(el('p', 'empty', 'no values: ' + l[3]));
      return;
    }
    const half = d.width_ms / 2;
    DB.plot(box, {
      x: d.x_ms,
      xLabel: 'ms',
      yLabel: l[2],
      height: 200,
      xRange: function (u, min, max) { return [min - half, max + half]; },
      yRange: function (u, min, max) { return [0, Math.max(1, max) * 1.1]; },
      // Counts: whole-number ticks.
      yIncrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
      // An empty bin draws no bar (uPlot strokes a zero-height one).
      series: [{ label: l[2] + ' per ' + num(d.width_ms, 1) + ' ms bin', values: d.counts.map(function (n) { return n === 0 ? null : n; }), bars: true }],
      rules: [
        { x: s.p50, label: 'p50 ' + num(s.p50, 1), color: '#2ca02c' },
        { x: s.p99, label: 'p99 ' + num(s.p99, 1), color: '#d62728' },
      ].filter(function (r) { return r.x !== null && r.x !== undefined; }),
    });
  });

  // ---- The rates, with their 95% intervals ------------------------------------------------------------
  const RATES = [
    ['pause_takeover_rate', 'Pause takeover rate', 'pause', 'pauses', 'taken over', 'the model should hold: lower is better', 'no pause (silence_ms, expect: hold) was played'],
    ['backchannel_yield_rate', 'Backchannel yield rate', 'backchannel', 'backchannels', 'yielded to', 'the model should keep talking: lower is better', 'no backchannel (expect: continue) was heard while the model spoke'],
  ];
  const ratesBox = section('Pause takeover and backchannel yield rates (fraction of events, 95% Wilson interval)', '', 'rates');
  RATES.forEach(function (r) {
    const v = b.summary[r[0]];
    const row = el('div', 'rate');
    row.id = 'rate-' + r[0];
    const o = (b.outcomes[r[2]] || {});
    row.appendChild(el('p', 'meta', r[1] + ': ' + (v.rate === null ? '-' : num(v.rate, 3)) + (v.ci95 ? ' [' + num(v.ci95[0], 3) + '–' + num(v.ci95[1], 3) + ']' : '') + ', n ' + v.count + ' ' + r[3] + ' (outcomes: ' + counts(o) + '); ' + r[5]));
    row.appendChild(el('p', 'origin', 'origin: ' + (origin[r[0]] || '-')));
    if (v.count === 0) {
      row.appendChild(el('p', 'empty', 'no values: ' + r[6]));
      ratesBox.appendChild(row);
      return;
    }
    // An interval on a 0-1 axis: the rate a dot, its 95% interval the bar.
    const W = width();
    const H = 54;
    const L = 60;
    const R = W - 30;
    const px = function (f) { return L + f * (R - L); };
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', String(W));
    svg.setAttribute('height', String(H));
    svg.setAttribute('class', 'rate-chart');
    const add = function (tag, attrs, text) {
      const e = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    add('line', { x1: L, x2: R, y1: 34, y2: 34, stroke: '#333' });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      add('line', { x1: px(f), x2: px(f), y1: 34, y2: 39, stroke: '#333' });
      add('text', { x: px(f), y: 51, 'text-anchor': 'middle', 'font-size': 11, fill: '#333' }, String(f));
    });
    add('text', { x: 4, y: 38, 'font-size': 11, fill: '#333' }, 'fraction');
    if (v.ci95) add('rect', { x: px(v.ci95[0]), y: 14, width: Math.max(2, px(v.ci95[1]) - px(v.ci95[0])), height: 12, fill: '#1f77b455', stroke: '#1f77b4' });
    if (v.rate !== null) add('circle', { cx: px(v.rate), cy: 20, r: 5, fill: '#1f77b4' });
    row.appendChild(svg);
    ratesBox.appendChild(row);
  });
})();
