/* The sweep page's own script: each SLO figure against the session count (an arrival sweep: its
 * blocking probability with its 95% interval, then each SLO figure, against the offered Erlangs).
 * Each tested point is coloured by its verdict and nothing joins points across untested loads;
 * a bound is a dashed rule, the knee a labelled band from the last pass to the first fail. Then the
 * loads tested, in the order tested, each linked to its runs' own pages, each cell ✓ or ✗.
 * Runs in the browser; no network. Needs charts.js (window.DB). */
/* global DB, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const el = DB.el;
  const median = function (v) {
    const s = v.filter(function (x) { return x !== null; }).sort(function (a, b) { return a - b; });
    return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const axis = data.axis;
  const knee = data.knee
    ? [{ from: data.knee.pass_x === null ? data.knee.fail_x : data.knee.pass_x, to: data.knee.fail_x, lines: ['capacity ' + data.capacity_text, 'first fail ' + data.knee.fail, 'resolution ' + data.knee.resolution] }]
    : [];

  /**
   * One figure against the load: a point per tested load, coloured by whether this figure met its
   * bound there (`oks`: true, false, or null where no bound names it), grey where the client was
   * the limit; `hrules` the bounds; `extra` further point series.
   */
  function figureChart(title, note, yLabel, values, oks, hrules, extra, yRange) {
    const box = el('section');
    box.appendChild(el('h2', '', title));
    box.appendChild(el('p', 'origin', note));
    document.getElementById('charts').appendChild(box);
    const kind = function (i) {
      if (data.verdicts[i] === 'client-limited' || data.verdicts[i] === 'failed-to-run') return data.verdicts[i];
      return oks[i] === true ? 'met its bound' : oks[i] === false ? 'missed its bound' : 'measured';
    };
    const COLOR = { 'met its bound': '#2ca02c', 'missed its bound': '#d62728', measured: '#1f77b4', 'client-limited': '#7f7f7f', 'failed-to-run': '#000000' };
    const series = Object.keys(COLOR)
      .filter(function (k) { return values.some(function (_, i) { return kind(i) === k; }); })
      .map(function (k) {
        return { label: k, color: COLOR[k], points: true, size: 9, values: values.map(function (y, i) { return kind(i) === k ? y : null; }) };
      });
    // Padded past the first and last load, so no point sits cut at an edge; session counts are whole.
    const lo = Math.min.apply(null, data.x);
    const hi = Math.max.apply(null, data.x);
    const pad = hi > lo ? (hi - lo) * 0.05 : 1;
    DB.plot(box, {
      x: data.x,
      xLabel: axis,
      yLabel: yLabel,
      height: 260,
      xRange: function () { return [lo - pad, hi + pad]; },
      xIncrs: data.blocking ? undefined : [1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1000, 1024, 2000, 4096],
      // The axis holds every bound as well as the data: a bound out of sight says nothing.
      yRange:
        yRange ||
        function (u, min, max) {
          const ys = hrules.map(function (r) { return r.y; }).concat([min, max]).filter(function (v) { return v !== null && Number.isFinite(v); });
          const a = Math.min.apply(null, ys);
          const b = Math.max.apply(null, ys);
          const p = b > a ? (b - a) * 0.08 : Math.max(1, Math.abs(b) * 0.1);
          return [a >= 0 && a - p < 0 ? 0 : a - p, b + p];
        },
      series: series.concat(extra || []),
      hrules: hrules,
      bands: knee,
    });
  }

  const against = data.blocking ? 'the offered Erlangs' : 'the session count';
  // An arrival sweep: the blocking probability first, its 95% Wilson interval and the --max-blocking bound beside it.
  if (data.blocking) {
    const values = data.blocking.values.map(function (b) { return b ? b.rate : null; });
    const ci = function (k) { return data.blocking.values.map(function (b) { return b && b.ci95 ? b.ci95[k] : null; }); };
    const oks = values.map(function (v) { return v === null ? null : v <= data.blocking.max; });
    figureChart('Blocking probability against the offered Erlangs (pooled over runs; the bound dashed)', data.origin.blocking_probability || '', 'blocking probability', values, oks, [{ y: data.blocking.max, label: 'bound: --max-blocking ' + data.blocking.max }], [
      { label: '95% interval, low', color: '#7fa7d0', points: true, size: 5, values: ci(0) },
      { label: '95% interval, high', color: '#7fa7d0', points: true, size: 5, values: ci(1) },
    ]);
  }
  const figureOf = function (term) { return term.replace(/[<>=].*$/, ''); };
  /** Per point: every run met the term, a run missed it, or no run has it. */
  const termOks = function (t) {
    return t.ok.map(function (runs) { return runs.length === 0 || runs.every(function (x) { return x === null; }) ? null : runs.every(function (x) { return x === true; }); });
  };
  // A conversation sweep draws its behaviour figures below, each with its bound when a term names it.
  const behaviour = data.behaviour || [];
  const drawnBelow = function (t) { return behaviour.some(function (f) { return f.figure === figureOf(t.term); }); };
  data.terms.forEach(function (t) {
    if (drawnBelow(t)) return;
    figureChart(t.label + ': the figure against ' + against + ' (median over runs; the bound dashed)', data.origin['slo ' + figureOf(t.term)] || '', figureOf(t.term), t.values.map(median), termOks(t), [{ y: t.bound, label: 'bound: ' + t.label }]);
  });
  // The server's own gauges (--server-gauge), each against the load: what the server held at each point.
  (data.gauges || []).forEach(function (g) {
    figureChart(
      'Server gauge: ' + g.name + ' against ' + against + ' (the largest over runs)',
      "server (its /metrics, scraped by each run): the gauge's max over the run's scrapes, in the server's own unit",
      g.name,
      g.max,
      g.max.map(function () { return null; }),
      [],
    );
  });
  behaviour.forEach(function (f) {
    const term = data.terms.find(function (t) { return figureOf(t.term) === f.figure; });
    const extra = f.ci95
      ? [
          { label: '95% interval, low (widest over runs)', color: '#7fa7d0', points: true, size: 5, values: f.ci95.map(function (c) { return c ? c[0] : null; }) },
          { label: '95% interval, high', color: '#7fa7d0', points: true, size: 5, values: f.ci95.map(function (c) { return c ? c[1] : null; }) },
        ]
      : [];
    figureChart(
      'Behaviour: ' + f.figure + ' against the session count (' + f.unit + ', median over runs' + (term ? '; the bound dashed' : '') + ')',
      f.what + '; origin: ' + (f.origin || '-'),
      f.unit,
      f.values.map(median),
      term ? termOks(term) : f.values.map(function () { return null; }),
      term ? [{ y: term.bound, label: 'bound: ' + term.label }] : [],
      extra,
      f.unit === 'fraction' ? function () { return [0, 1]; } : undefined,
    );
  });

  // The loads tested: readable headers, ✓/✗ per cell, the order tested, each load linked to its runs' pages.
  const table = document.getElementById('sessions');
  const head = ['tested'].concat(data.blocking ? ['rate', 'offered Erlangs', 'blocking (95% interval)'] : ['sessions'], ['verdict', 'qualified runs'], data.terms.map(function (t) { return t.label; }), ['ended early', 'run pages']);
  const termStart = head.length - data.terms.length - 2;
  const hr = el('tr');
  head.forEach(function (h, i) {
    const th = el('th', '', h);
    const t = data.terms[i - termStart];
    if (i >= termStart && t) th.title = t.term;
    hr.appendChild(th);
  });
  table.querySelector('thead').appendChild(hr);
  const body = table.querySelector('tbody');
  data.x.forEach(function (n, i) {
    const tr = el('tr');
    tr.className = 'verdict-' + data.verdicts[i];
    const b = data.blocking ? data.blocking.values[i] : null;
    const cells = [String(data.order[i])].concat(
      data.blocking ? [data.loads[i], String(n), b && b.rate !== null ? b.rate + (b.ci95 ? ' (' + b.ci95[0] + '..' + b.ci95[1] + ')' : '') : '-'] : [data.loads[i]],
      [data.verdicts[i], data.qualified[i]],
    );
    cells.forEach(function (c, k) {
      const td = el('td', k === 0 ? 'num' : '', c);
      if (c === data.verdicts[i]) td.className = 'verdict-cell ' + c;
      tr.appendChild(td);
    });
    data.terms.forEach(function (t) {
      const td = el('td');
      const ok = t.ok[i];
      td.className = ok.every(function (x) { return x === true; }) ? 'cell-ok' : 'cell-bad';
      td.textContent = t.values[i].map(function (v, r) { return (ok[r] ? '✓ ' : '✗ ') + (v === null ? '-' : String(v)); }).join(' / ');
      tr.appendChild(td);
    });
    const early = data.ended_early ? data.ended_early[i] : null;
    tr.appendChild(el('td', early ? 'cell-bad' : 'empty', early || '-'));
    const links = el('td');
    (data.links[i] || []).forEach(function (href, r) {
      if (!href) return links.appendChild(el('span', 'empty', 'run ' + (r + 1) + ': no page '));
      const a = el('a', 'run-link', 'run ' + (r + 1));
      a.href = href;
      links.appendChild(a);
      links.appendChild(document.createTextNode(' '));
    });
    tr.appendChild(links);
    body.appendChild(tr);
  });
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
