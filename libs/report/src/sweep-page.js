/* The sweep page's own script: each SLO figure against the session count (an arrival sweep: its
 * blocking probability with its 95% interval, then each SLO figure, against the offered Erlangs), its bound drawn, the
 * capacity marked; a conversation sweep's behaviour figures the same way, rates with their 95%
 * intervals; then the counts tested. Runs in the browser; no network. */
/* global uPlot, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const width = Math.min(1100, document.body.clientWidth - 40);
  const median = function (v) {
    const s = v.filter(function (x) { return x !== null; }).sort(function (a, b) { return a - b; });
    return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const axis = data.axis;
  /** One figure against the session count (or the offered Erlangs): its median over runs, then `extra` series ({label, values, stroke, dash}), the capacity marked; `yRange` fixes the axis. */
  function figureChart(title, note, yLabel, values, extra, yRange) {
    const box = document.createElement('section');
    box.innerHTML = '<h2></h2><p class="origin"></p>';
    box.querySelector('h2').textContent = title;
    box.querySelector('p').textContent = note + (data.capacity_x !== null ? '; capacity ' + data.capacity_text + ' marked' : '');
    document.getElementById('charts').appendChild(box);
    const el = document.createElement('div');
    box.appendChild(el);
    const marker = data.x.map(function (n, i) { return n === data.capacity_x ? values[i] : null; });
    const series = [{ label: axis }, { label: data.blocking && values === blockingValues ? 'pooled over runs' : 'median of runs', stroke: '#1f77b4', width: 2 }];
    const columns = [data.x, values];
    extra.forEach(function (e) {
      series.push({ label: e.label, stroke: e.stroke, dash: e.dash, width: 1.5 });
      columns.push(e.values);
    });
    series.push({ label: 'capacity', stroke: '#2ca02c', paths: function () { return null; }, points: { show: true, size: 12, stroke: '#2ca02c', fill: '#2ca02c' } });
    columns.push(marker);
    const scales = { x: { time: false } };
    if (yRange) scales.y = { range: yRange };
    new uPlot(
      {
        width: width,
        height: 260,
        scales: scales,
        axes: [{ label: axis, stroke: '#333' }, { label: yLabel, stroke: '#333', size: 60 }],
        series: series,
      },
      columns,
      el,
    );
  }
  const against = data.blocking ? 'the offered Erlangs' : 'the session count';
  // An arrival sweep: the blocking probability first, its 95% Wilson interval and the --max-blocking bound beside it.
  const blockingValues = data.blocking ? data.blocking.values.map(function (b) { return b ? b.rate : null; }) : null;
  if (data.blocking) {
    const ci = function (k) { return data.blocking.values.map(function (b) { return b && b.ci95 ? b.ci95[k] : null; }); };
    figureChart('Blocking probability against the offered Erlangs (pooled over runs; the bound dashed)', data.origin.blocking_probability || '', 'blocking probability', blockingValues, [
      { label: 'bound (--max-blocking ' + data.blocking.max + ')', stroke: '#d62728', dash: [6, 4], values: data.x.map(function () { return data.blocking.max; }) },
      { label: '95% interval, low', stroke: '#7fa7d0', dash: [2, 3], values: ci(0) },
      { label: '95% interval, high', stroke: '#7fa7d0', dash: [2, 3], values: ci(1) },
    ]);
  }
  const figureOf = function (term) { return term.replace(/[<>=].*$/, ''); };
  // A conversation sweep draws its behaviour figures below, each with its bound when a term names it.
  const behaviour = data.behaviour || [];
  const drawnBelow = function (t) { return behaviour.some(function (f) { return f.figure === figureOf(t.term); }); };
  data.terms.forEach(function (t) {
    if (drawnBelow(t)) return;
    figureChart(t.term + ': the figure against ' + against + ' (median over runs; the bound dashed)', data.origin['slo ' + figureOf(t.term)] || '', figureOf(t.term), t.values.map(median), [
      { label: 'bound', stroke: '#d62728', dash: [6, 4], values: data.x.map(function () { return t.bound; }) },
    ]);
  });
  behaviour.forEach(function (f) {
    const extra = [];
    const term = data.terms.find(function (t) { return figureOf(t.term) === f.figure; });
    if (term) extra.push({ label: 'bound (' + term.term + ')', stroke: '#d62728', dash: [6, 4], values: data.x.map(function () { return term.bound; }) });
    if (f.ci95) {
      extra.push({ label: '95% interval, low (widest over runs)', stroke: '#7fa7d0', dash: [2, 3], values: f.ci95.map(function (c) { return c ? c[0] : null; }) });
      extra.push({ label: '95% interval, high', stroke: '#7fa7d0', dash: [2, 3], values: f.ci95.map(function (c) { return c ? c[1] : null; }) });
    }
    figureChart(
      'Behaviour: ' + f.figure + ' against the session count (' + f.unit + ', median over runs' + (term ? '; the bound dashed' : '') + ')',
      f.what + '; origin: ' + (f.origin || '-'),
      f.unit,
      f.values.map(median),
      extra,
      f.unit === 'fraction' ? [0, 1] : undefined,
    );
  });
  const table = document.getElementById('sessions');
  const head = (data.blocking ? ['rate', 'offered Erlangs', 'blocking (95% interval)'] : ['sessions']).concat(['verdict', 'qualified runs'], data.terms.map(function (t) { return t.term; }));
  table.querySelector('thead').innerHTML = '<tr>' + head.map(function () { return '<th></th>'; }).join('') + '</tr>';
  table.querySelectorAll('th').forEach(function (th, i) { th.textContent = head[i]; });
  const body = table.querySelector('tbody');
  data.x.forEach(function (n, i) {
    const tr = document.createElement('tr');
    if (data.verdicts[i] !== 'pass') tr.className = 'incomplete';
    const b = data.blocking ? data.blocking.values[i] : null;
    const load = data.blocking ? [data.loads[i], String(n), b && b.rate !== null ? b.rate + (b.ci95 ? ' (' + b.ci95[0] + '..' + b.ci95[1] + ')' : '') : '-'] : [data.loads[i]];
    const cells = load.concat([data.verdicts[i], data.qualified[i]],
      data.terms.map(function (t) { return t.values[i].map(function (v) { return v === null ? '-' : String(v); }).join(' / '); }),
    );
    cells.forEach(function (c) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
