/* The sweep page's own script: each SLO figure against the session count, its bound drawn, the
 * capacity marked; then the counts tested. Runs in the browser; no network. */
/* global uPlot, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const width = Math.min(1100, document.body.clientWidth - 40);
  const median = function (v) {
    const s = v.filter(function (x) { return x !== null; }).sort(function (a, b) { return a - b; });
    return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  data.terms.forEach(function (t) {
    const box = document.createElement('section');
    box.innerHTML = '<h2></h2><p class="origin"></p>';
    box.querySelector('h2').textContent = t.term + ': the figure against the session count (median over runs; the bound dashed)';
    box.querySelector('p').textContent = (data.origin['slo ' + t.term.replace(/[<>=].*$/, '')] || '') + (data.capacity.sessions !== null ? '; capacity ' + data.capacity.sessions + ' sessions marked' : '');
    document.getElementById('charts').appendChild(box);
    const el = document.createElement('div');
    box.appendChild(el);
    const values = t.values.map(median);
    const marker = data.sessions.map(function (n, i) { return n === data.capacity.sessions ? values[i] : null; });
    new uPlot(
      {
        width: width,
        height: 260,
        scales: { x: { time: false } },
        axes: [{ label: 'sessions', stroke: '#333' }, { label: t.term.replace(/[<>=].*$/, ''), stroke: '#333', size: 60 }],
        series: [
          { label: 'sessions' },
          { label: 'median of runs', stroke: '#1f77b4', width: 2 },
          { label: 'bound', stroke: '#d62728', dash: [6, 4], width: 1.5 },
          { label: 'capacity', stroke: '#2ca02c', paths: function () { return null; }, points: { show: true, size: 12, stroke: '#2ca02c', fill: '#2ca02c' } },
        ],
      },
      [data.sessions, values, data.sessions.map(function () { return t.bound; }), marker],
      el,
    );
  });
  const table = document.getElementById('sessions');
  const head = ['sessions', 'verdict', 'qualified runs'].concat(data.terms.map(function (t) { return t.term; }));
  table.querySelector('thead').innerHTML = '<tr>' + head.map(function () { return '<th></th>'; }).join('') + '</tr>';
  table.querySelectorAll('th').forEach(function (th, i) { th.textContent = head[i]; });
  const body = table.querySelector('tbody');
  data.sessions.forEach(function (n, i) {
    const tr = document.createElement('tr');
    if (data.verdicts[i] !== 'pass') tr.className = 'incomplete';
    const cells = [String(n), data.verdicts[i], data.qualified[i]].concat(
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
