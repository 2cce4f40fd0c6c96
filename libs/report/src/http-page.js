/* The http page's own script: TTFT and E2E of every request against its intended start, and the
 * client's send lag against the same axis with its bound. Runs in the browser; no network. */
/* global uPlot, document, window */
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const r = data.requests;
  const width = Math.min(1100, document.body.clientWidth - 40);
  const dots = function (color) {
    return { stroke: color, paths: function () { return null; }, points: { show: true, size: 4, stroke: color, fill: color } };
  };
  function chart(title, origin, opts, columns) {
    const box = document.createElement('section');
    box.innerHTML = '<h2></h2><p class="origin"></p>';
    box.querySelector('h2').textContent = title;
    box.querySelector('p').textContent = origin;
    document.getElementById('charts').appendChild(box);
    const el = document.createElement('div');
    box.appendChild(el);
    if (columns[0].length === 0) {
      el.className = 'empty';
      el.textContent = 'no request recorded';
      return;
    }
    new uPlot(Object.assign({ width: width, height: 280, scales: { x: { time: false } } }, opts), columns, el);
  }
  chart(
    'TTFT and E2E of each request, ms, against its intended start (s)',
    data.summary.measurement_origin.e2e || '',
    {
      axes: [{ label: 'intended start, s since the first', stroke: '#333' }, { label: 'ms', stroke: '#333', size: 60 }],
      series: [{ label: 'intended start' }, Object.assign({ label: 'TTFT' }, dots('#1f77b4')), Object.assign({ label: 'E2E' }, dots('#ff7f0e'))],
    },
    [r.intended_s, r.ttft_ms, r.e2e_ms],
  );
  const bound = data.summary.client.max_send_lag_ms;
  chart(
    "The client's send lag of each request, ms (actual start − intended start); over the dashed bound the run is unqualified",
    data.summary.measurement_origin.send_lag_ms || '',
    {
      axes: [{ label: 'intended start, s since the first', stroke: '#333' }, { label: 'ms', stroke: '#333', size: 60 }],
      series: [{ label: 'intended start' }, Object.assign({ label: 'send lag' }, dots('#2ca02c')), { label: 'bound', stroke: '#d62728', dash: [6, 4], width: 1.5, points: { show: false } }],
    },
    [r.intended_s, r.send_lag_ms, r.intended_s.map(function () { return bound; })],
  );
  window.reportReadyMs = window.performance.now();
  window.reportReady = true;
})();
