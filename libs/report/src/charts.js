/* The chart helpers every report page shares, on uPlot: a legend that is a colour key at rest and
 * shows values only while the cursor is on the chart; every chart with a time axis on one cursor;
 * ticks at the precision of their own step; distributions as CDFs with p50 and p99 marked.
 * Runs in the browser; no network. Exposes window.DB. */
/* global uPlot, document, window */
(function () {
  'use strict';
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  /** The key every time chart shares: its cursor moves them all. */
  const TIME = 'time';
  const plots = [];

  const width = function () {
    return Math.min(1100, document.body.clientWidth - 40);
  };

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /** The fewest decimals that write `step` exactly (to 1e-6), at most 6. */
  function decimalsFor(step) {
    if (!(step > 0) || !Number.isFinite(step)) return 0;
    for (let d = 0; d <= 6; d++) {
      const scaled = step * Math.pow(10, d);
      if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
    }
    return 6;
  }

  /** A number at `d` decimals, thousands apart for large ones. */
  function fmt(v, d) {
    if (v === null || v === undefined || !Number.isFinite(v)) return '';
    return Math.abs(v) >= 10000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(d);
  }

  /** Tick labels at the precision of the step between ticks: 0.9965 0.9970 0.9975, never 0.997 0.997. */
  function ticks(u, splits) {
    const step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : Math.abs(splits[0] || 1);
    const d = decimalsFor(step);
    return splits.map(function (v) {
      return fmt(v, d);
    });
  }

  /** A hovered value at three significant digits past its integer part. */
  function readout(v) {
    if (v === null || v === undefined || !Number.isFinite(v)) return '–';
    const a = Math.abs(v);
    return a >= 1000 ? fmt(v, 0) : a >= 1 ? v.toFixed(2).replace(/\.?0+$/, '') : v.toPrecision(3);
  }

  /**
   * The chart's own legend: one colour key per series, always shown; while the cursor is on the
   * chart, the x value and each series' value beside its key (nothing at rest, never "--").
   */
  function keyLegend(box, series, xLabel) {
    const row = el('div', 'key');
    const at = el('span', 'key-at', '');
    const values = [];
    series.forEach(function (s, i) {
      if (i === 0 || s.label === undefined) return values.push(null);
      const item = el('span', 'key-item');
      const sw = el('span', 'swatch');
      sw.style.background = s.swatch || s.stroke;
      if (s.dash) sw.className += ' dashed';
      item.appendChild(sw);
      item.appendChild(el('span', 'key-label', s.label));
      const v = el('span', 'key-value', '');
      item.appendChild(v);
      values.push(v);
      row.appendChild(item);
    });
    row.appendChild(at);
    box.appendChild(row);
    return function (u) {
      const idx = u.cursor.idx;
      if (idx === null || idx === undefined) {
        at.textContent = '';
        values.forEach(function (v) {
          if (v) v.textContent = '';
        });
        return;
      }
      at.textContent = xLabel + ' ' + readout(u.data[0][idx]);
      values.forEach(function (v, i) {
        if (v) v.textContent = ' ' + readout(u.data[i][idx]);
      });
    };
  }

  /**
   * A chart in `box`: x values, then series [{label, values, color, axis: 'right', bars, points,
   * dash}]. `sync`: x is seconds on the run's axis, and the chart moves with every other such chart.
   * `rules`: [{x, label, color}] drawn as vertical dashed lines (p50, p99). Returns the uPlot.
   */
  function plot(box, opts) {
    const series = [{ label: opts.xLabel }];
    const columns = [opts.x];
    const axes = [
      { label: opts.xLabel, stroke: '#333', values: opts.xLog ? undefined : ticks, incrs: opts.xIncrs },
      { label: opts.yLabel, stroke: '#333', size: 64, values: opts.yLog ? undefined : ticks, incrs: opts.yIncrs },
    ];
    const scales = { x: opts.xLog ? { time: false, distr: 3 } : { time: false, range: opts.xRange } };
    scales.y = opts.yLog ? { distr: 3 } : { range: opts.yRange };
    let right = false;
    opts.series.forEach(function (s, i) {
      const color = s.color || COLORS[i % COLORS.length];
      const one = { label: s.label, stroke: color, width: s.width || 1.5, scale: s.axis === 'right' ? 'right' : 'y', dash: s.dash, points: { show: false } };
      if (s.bars) {
        one.paths = uPlot.paths.bars({ size: [0.8, 40] });
        one.fill = color + '88';
      }
      if (s.step) one.paths = uPlot.paths.stepped({ align: 1 });
      if (s.points) {
        one.paths = function () {
          return null;
        };
        one.points = { show: true, size: s.size || 6, stroke: color, fill: color };
      }
      if (s.axis === 'right') right = s.axisLabel || s.label;
      series.push(one);
      columns.push(s.values);
    });
    if (right) {
      scales.right = { auto: true };
      axes.push({ label: right, scale: 'right', side: 1, stroke: '#333', grid: { show: false }, size: 64, values: ticks });
    }
    const wrap = el('div', 'chart');
    box.appendChild(wrap);
    const show = keyLegend(wrap, series, opts.xLabel);
    const target = el('div');
    wrap.appendChild(target);
    const hooks = { setCursor: [show] };
    hooks.draw = [];
    if (opts.bands && opts.bands.length) hooks.draw.push(drawBands(opts.bands));
    if (opts.rules && opts.rules.length) hooks.draw.push(drawRules(opts.rules));
    if (opts.hrules && opts.hrules.length) hooks.draw.push(drawHRules(opts.hrules));
    const u = new uPlot(
      {
        width: width(),
        height: opts.height || 240,
        series: series,
        axes: axes,
        scales: scales,
        legend: { show: false },
        cursor: opts.sync ? { sync: { key: TIME, setSeries: false } } : {},
        hooks: hooks,
      },
      columns,
      target,
    );
    u.root.dataset.time = opts.sync ? 'true' : 'false';
    plots.push(u);
    return u;
  }

  /** A draw hook on the plot's canvas, its text set up once: `draw(u, ctx, pr)` between save and restore. */
  function overlay(baseline, align, draw) {
    return function (u) {
      const ctx = u.ctx;
      const pr = window.devicePixelRatio || 1;
      ctx.save();
      ctx.font = 11 * pr + 'px system-ui, sans-serif';
      ctx.textBaseline = baseline;
      ctx.textAlign = align;
      draw(u, ctx, pr);
      ctx.restore();
    };
  }

  /** Vertical dashed rules at x values, each labelled at the top. */
  function drawRules(rules) {
    return overlay('top', 'left', function (u, ctx, pr) {
      rules.forEach(function (r, i) {
        const x = u.valToPos(r.x, 'x', true);
        if (!(x >= u.bbox.left && x <= u.bbox.left + u.bbox.width)) return;
        ctx.strokeStyle = r.color || '#555';
        ctx.setLineDash([5 * pr, 4 * pr]);
        ctx.lineWidth = pr;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = r.color || '#555';
        const text = r.label;
        const w = ctx.measureText(text).width;
        // Labels alternate rows so two close rules do not write over each other.
        const y = u.bbox.top + 2 * pr + (i % 2) * 13 * pr;
        ctx.fillText(text, Math.min(x + 3 * pr, u.bbox.left + u.bbox.width - w - 2 * pr), y);
      });
    });
  }

  /** Horizontal dashed rules at y values (a bound), each labelled at the right: a rule, never a data point. */
  function drawHRules(rules) {
    return overlay('bottom', 'right', function (u, ctx, pr) {
      rules.forEach(function (r) {
        const y = u.valToPos(r.y, r.scale || 'y', true);
        if (!(y >= u.bbox.top - 1 && y <= u.bbox.top + u.bbox.height + 1)) return;
        ctx.strokeStyle = r.color || '#d62728';
        ctx.setLineDash([6 * pr, 4 * pr]);
        ctx.lineWidth = 1.5 * pr;
        ctx.beginPath();
        ctx.moveTo(u.bbox.left, y);
        ctx.lineTo(u.bbox.left + u.bbox.width, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = r.color || '#d62728';
        ctx.fillText(r.label, u.bbox.left + u.bbox.width - 4 * pr, y - 2 * pr);
      });
    });
  }

  /** Shaded x ranges (a knee between the last pass and the first fail), each labelled inside at the top. */
  function drawBands(bands) {
    return overlay('top', 'left', function (u, ctx, pr) {
      bands.forEach(function (b) {
        const x0 = u.valToPos(b.from, 'x', true);
        const x1 = u.valToPos(b.to, 'x', true);
        ctx.fillStyle = b.color || 'rgba(255, 165, 0, 0.18)';
        ctx.fillRect(Math.min(x0, x1), u.bbox.top, Math.max(2 * pr, Math.abs(x1 - x0)), u.bbox.height);
        ctx.fillStyle = '#7a4a00';
        (b.lines || [b.label]).forEach(function (line, i) {
          ctx.fillText(line, Math.min(x0, x1) + 4 * pr, u.bbox.top + 4 * pr + i * 13 * pr);
        });
      });
    });
  }

  /** Nearest-rank percentile of sorted values (the summary's rule). */
  function rank(sorted, p) {
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  }

  /**
   * A distribution as its CDF (fraction at or below each value), p50 and p99 marked, the x axis
   * padded past both ends and ticked at the range's own precision; a caption gives n, p50, p99
   * and the range. Returns the sorted values.
   */
  function cdf(box, opts) {
    const sorted = opts.values.filter(function (v) { return v !== null && v !== undefined && Number.isFinite(v); }).slice().sort(function (a, b) { return a - b; });
    const n = sorted.length;
    const min = sorted[0];
    const max = sorted[n - 1];
    const p50 = rank(sorted, 50);
    const p99 = rank(sorted, 99);
    box.appendChild(el('p', 'caption', (opts.label ? opts.label + ': ' : '') + 'n ' + n + ', p50 ' + readout(p50) + ' ' + opts.unit + ', p99 ' + readout(p99) + ' ' + opts.unit + ', range ' + readout(min) + '–' + readout(max) + ' ' + opts.unit + ' (' + readout(max - min) + ' ' + opts.unit + ')'));
    // At most 2000 points: evenly spaced ranks, the first and last kept.
    const step = Math.max(1, Math.floor(n / 2000));
    const x = [];
    const y = [];
    for (let i = 0; i < n; i += step) {
      x.push(sorted[i]);
      y.push((i + 1) / n);
    }
    if (x[x.length - 1] !== max || y[y.length - 1] !== 1) {
      x.push(max);
      y.push(1);
    }
    const span = max - min;
    const pad = span > 0 ? span * 0.06 : Math.max(Math.abs(max) * 0.01, 1e-3);
    plot(box, {
      x: x,
      xLabel: opts.unit,
      yLabel: 'fraction ≤',
      height: opts.height || 190,
      xRange: function () { return [min - pad, max + pad]; },
      yRange: function () { return [0, 1.02]; },
      series: [{ label: opts.seriesLabel || 'fraction at or below', values: y, color: opts.color, step: true }],
      rules: [
        { x: p50, label: 'p50 ' + readout(p50), color: '#2ca02c' },
        { x: p99, label: 'p99 ' + readout(p99), color: '#d62728' },
      ],
    });
    return sorted;
  }

  /** Whether every value is 0 (or none): such a chart is said in one sentence instead. */
  function allZero(values) {
    return values.every(function (v) { return v === null || v === undefined || v === 0; });
  }

  window.DB = { COLORS: COLORS, TIME: TIME, plots: plots, el: el, plot: plot, cdf: cdf, ticks: ticks, decimalsFor: decimalsFor, readout: readout, allZero: allZero, width: width, keyLegend: keyLegend };
})();
