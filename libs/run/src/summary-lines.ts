import type { ArrivalsSummary, DuplexAggregate, RunSummary } from '@duplex-bench/results';
import type { ServerMetricsSummary, StallsSummary } from '@duplex-bench/telemetry';
import type { BehaviourSummary, RssFigures } from '@duplex-bench/metrics';
import { mibPerMin } from './lifecycle/progress';
import { verdictLine, type RunVerdict } from './verdict';

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : `${v.toFixed(2)} ms`);

/** The client's receive delay, stated or said unmeasured, and its held-back reads when there were any: one process's or pooled. */
export function renderReceiveDelay(s: Pick<RunSummary, 'receive_delay_ms' | 'reads_paused'>): string[] {
  const d = s.receive_delay_ms;
  return [
    d
      ? `client receive delay (server send stamp to client receive stamp, one host's monotonic clock): p50 ${ms(d.p50)}  p99 ${ms(d.p99)}  max ${ms(d.max)} (n ${d.count})`
      : 'client receive delay: not measured (the server stamps no frame; our mocks do with --stamp-sends)',
    ...(s.reads_paused ? [`client socket reads held back ${s.reads_paused} times: a socket that kept filling 64 KiB reads (a flood of frames) after the socket reads of one loop turn passed 50 ms waited for the deadlines`] : []),
  ];
}

/** The short human summary printed at the end of `probe run`. The last line is the verdict (`verdictOf`). */
export function renderRunSummary(s: RunSummary, output: string, v: RunVerdict): string {
  const d = s.pacing_deviation_ms;
  const reasons = Object.entries(s.sessions.incomplete_reasons)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const lines = [
    `sessions: ${s.sessions.started} started, ${s.sessions.completed} completed, ${s.sessions.incomplete} incomplete${reasons ? ` (${reasons})` : ''}, ${s.sessions.with_violation} with a late packet`,
    `packets: ${s.packets.sent} sent, ${s.packets.late} late (|deviation| > ${s.packet_ms} ms)`,
    `pacing |deviation| (client send start vs origin + N x ${s.packet_ms} ms): p50 ${ms(d.p50)}  p90 ${ms(d.p90)}  p99 ${ms(d.p99)}  p99.9 ${ms(d.p99_9)}  max ${ms(d.max)}`,
  ];
  if (s.pacing_deviation_steady_ms) {
    const st = s.pacing_deviation_steady_ms;
    lines.push(`  after ${s.warmup_s} s warm-up: p50 ${ms(st.p50)}  p99 ${ms(st.p99)}  max ${ms(st.max)}`);
  }
  lines.push(
    `ws.send() call (client): p99 ${ms(s.websocket_send_ms.p99)}  max ${ms(s.websocket_send_ms.max)}; append span (due to sent): p99 ${ms(s.append_span_ms.p99)}`,
    `client event loop lag (10 ms timer): p99 ${ms(s.event_loop_lag_ms.p99)}  max ${ms(s.event_loop_lag_ms.max)}  over 80 ms: ${s.event_loop_lag_ms.over_80ms}; GC pauses ${s.gc_pause_ms.count}, max ${ms(s.gc_pause_ms.max)}`,
    ...renderReceiveDelay(s),
    `client CPU: ${s.cpu_cores.total.toFixed(2)} cores (user ${s.cpu_cores.user.toFixed(2)}, system ${s.cpu_cores.system.toFixed(2)})${s.cpu_us_per_packet ? `, ${s.cpu_us_per_packet.toFixed(1)} µs per packet cycle` : ''}; peak RSS ${(s.peak_rss_bytes / 2 ** 20).toFixed(0)} MiB${rssGrowthText(s.rss)}; peak overlapping streams ${s.peak_overlapping_streams}`,
    `written to ${output}`,
  );
  const codes = Object.entries(s.events.server_error_codes ?? {});
  if (codes.length > 0) {
    lines.splice(lines.length - 1, 0, `server error events: ${codes.map(([code, n]) => `${code} ${n}`).join(', ')} (a native session ends at its first)`);
  }
  const repeated = s.events.dialect?.receipt_seq_repeated ?? 0;
  const skipped = s.events.dialect?.receipt_seq_skipped ?? 0;
  if (repeated + skipped > 0) {
    lines.splice(lines.length - 1, 0, `server receipts out of order: ${repeated} repeated a seq, ${skipped} seq skipped (sglang-omni accepts each append once, in order; the sessions went on, as its client does)`);
  }
  if (s.duplex) lines.splice(lines.length - 1, 0, ...renderDuplex(s.duplex));
  lines.splice(lines.length - 1, 0, ...renderUnits(s));
  if (s.video) {
    const deleted = s.video.image_items_deleted !== undefined ? `; ${s.video.image_items_deleted} image items deleted to keep 8` : '';
    lines.splice(lines.length - 1, 0, `camera frames (${s.video.source}): ${s.video.frames_sent} sent, ${(s.video.frame_bytes / 1024).toFixed(1)} KiB of JPEG${deleted}`);
  }
  if (s.behaviour) lines.splice(lines.length - 1, 0, ...renderBehaviour(s.behaviour));
  if (s.arrivals) lines.splice(0, 0, ...renderArrivals(s.arrivals));
  if (s.server_metrics) lines.splice(lines.length - 1, 0, ...renderServerMetrics(s.server_metrics));
  if (s.stalls) lines.splice(lines.length - 1, 0, renderStalls(s.stalls));
  const late = `${s.packets.late} late packet(s) in ${s.sessions.with_violation} session(s)`;
  lines.push(
    s.pacing === 'lockstep' && v.verdict === 'unqualified'
      ? `LOCKSTEP: pacing not applicable (each unit went once the server had finished the previous one, no realtime schedule); ${s.lockstep?.units_per_s_total ?? 0} units/s total over ${s.lockstep?.units_per_s.count ?? 0} session(s); this measures the server's pace, not a realtime capacity`
      : verdictLine(v, {
          interrupted: `partial run, not a server measurement; ${s.packets.late === 0 ? 'no late packet so far' : late}`,
          qualified: 'every packet within one packet interval of its schedule; this run measures the server',
          unqualified:
            s.packets.sent === 0
              ? `no packet was sent: every session ended before streaming${reasons ? ` (${reasons})` : ''}; nothing was measured`
              : `${late}; the client missed its cadence, so this run is not a server measurement`,
        }),
  );
  return lines.join('\n');
}

/** The unit lines of a native run: lag and miss rate on the realtime schedule, the pace in lockstep. */
export function renderUnits(s: RunSummary): string[] {
  if (s.lockstep) {
    const l = s.lockstep;
    const m = l.ms_per_unit;
    return [
      `lockstep (${l.unit_ms} ms units, ${l.units.done} of ${l.units.expected} done): ms per unit (input complete to unit.done) p50 ${ms(m.p50)}  p90 ${ms(m.p90)}  p99 ${ms(m.p99)}  max ${ms(m.max)}`,
      `  units/s per session: p50 ${l.units_per_s.p50 ?? '-'}  min ${l.units_per_s.min ?? '-'}  max ${l.units_per_s.max ?? '-'}; total ${l.units_per_s_total} (realtime is ${Math.round(1000 / l.unit_ms * 1000) / 1000} per session)`,
    ];
  }
  if (!s.unit_lag_ms || !s.units) return [];
  const u = s.unit_lag_ms;
  const rate = s.unit_miss_rate === null || s.unit_miss_rate === undefined ? '-' : `${(s.unit_miss_rate * 100).toFixed(2)}%`;
  return [
    `units (${s.units.unit_ms} ms, input complete to unit.done): lag p50 ${ms(u.p50)}  p95 ${ms(u.p95)}  p99 ${ms(u.p99)}  max ${ms(u.max)}; miss rate ${rate} (${s.units.missed} of ${s.units.expected} past ${s.units.miss_threshold_ms} ms or never done)`,
  ];
}

/** The response lines of a summary, each saying where its figures run from and how many they pool. */
export function renderDuplex(d: DuplexAggregate): string[] {
  const st = (x: { count: number; p50: number | null; p99: number | null } | undefined, unit = ' ms') =>
    !x || x.p50 === null ? '-' : `p50 ${x.p50}${unit} p99 ${x.p99}${unit} (n ${x.count})`;
  const lines = [
    `responses of the ${d.sessions} complete sessions (${d.sessions_answered} answered): ${d.responses} finished, ${d.responses_unfinished} unfinished`,
    `  client, from response.created as received: TTFP ${st(d.ttfp_ms)}; TTFT ${st(d.ttft_ms)}; RTF ${st(d.rtf, '')}; TPOT ${st(d.tpot_ms)}`,
  ];
  if (d.server_ttfp_ms || d.server_ttft_ms || d.server_tpot_ms) {
    lines.push(`  server, its own clock from its request start: TTFP ${st(d.server_ttfp_ms)}; TTFT ${st(d.server_ttft_ms)}; TPOT ${st(d.server_tpot_ms)}`);
  }
  lines.push(`  stream window, client, from input start: TTFP ${st(d.duplex_stream_ttfp_ms)}; RTF ${st(d.duplex_stream_rtf, '')}`);
  if (d.incomplete) {
    const i = d.incomplete;
    const why = Object.entries(i.reasons).map(([k, n]) => `${k} ${n}`).join(', ');
    lines.push(`  apart, ${i.sessions} incomplete sessions (${why}): ${i.responses} finished responses; client TTFP ${st(i.ttfp_ms)}`);
  }
  return lines;
}

/** The behaviour lines of a conversation: each latency and rate, its count, and where it is measured. */
export function renderBehaviour(b: BehaviourSummary): string[] {
  const lat = (name: string, l: BehaviourSummary['response_latency_ms']) => `${name} p50 ${ms(l.p50)} p95 ${ms(l.p95)} max ${ms(l.max)} (n ${l.count})`;
  const rate = (name: string, r: BehaviourSummary['pause_takeover_rate']) =>
    `${name} ${r.rate === null ? '-' : r.rate.toFixed(2)}${r.ci95 ? ` [${r.ci95[0].toFixed(2)}-${r.ci95[1].toFixed(2)}]` : ''} (n ${r.count})`;
  const outcomes = Object.entries(b.outcomes)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return [
    `behaviour (client, user speech by send times, model speech on the playout clock): ${lat('response latency', b.response_latency_ms)}; ${lat('stop latency', b.stop_latency_ms)}; ${lat('cancel latency', b.cancel_latency_ms)}`,
    `  ${rate('pause takeover rate', b.pause_takeover_rate)}; ${rate('backchannel yield rate', b.backchannel_yield_rate)} (95% Wilson intervals); outcomes: ${outcomes || 'none'}`,
  ];
}

/** The arrival lines: what became of the arrivals, the blocking probability with its interval, and the latencies from the intended start. */
export function renderArrivals(a: ArrivalsSummary): string[] {
  const p = (b: ArrivalsSummary['blocking_probability']) => `${b.rate === null ? '-' : b.rate.toFixed(4)}${b.ci95 ? ` [${b.ci95[0].toFixed(4)}-${b.ci95[1].toFixed(4)}]` : ''} (n ${b.count})`;
  const lat = (name: string, l: ArrivalsSummary['connect_ms']) => `${name} p50 ${ms(l.p50)} p99 ${ms(l.p99)} max ${ms(l.max)}`;
  const lines = [
    `arrivals (${a.process} ${a.rate_per_s}/s for ${a.run_for_s} s, sessions ${a.session_duration}${/^(fixed|exp|lognormal):/.test(a.session_duration) ? ' s' : ''}, ${a.offered_erlangs} Erlangs offered): ${a.arrived} arrived, ${a.started} started, ${a.completed} completed, ${a.blocked} blocked, ${a.client_skipped} client_skipped, ${a.failed_to_open} failed to open; peak in flight ${a.peak_in_flight}`,
    `  blocking probability ${p(a.blocking_probability)}${a.steady ? `; after ${a.steady.from_s} s warm-up ${p(a.steady.blocking_probability)}` : ''} (95% Wilson intervals)`,
    `  from the intended start (client): ${lat('connect', a.connect_ms)}; ${lat('handshake', a.handshake_ms)}; client start lag p99 ${ms(a.start_lag_ms.p99)} max ${ms(a.start_lag_ms.max)}`,
  ];
  return lines;
}

/** "+0.12 MiB/min": a growth, signed. */

/**
 * ", RSS +0.12 MiB/min from 60 s over 540 s; +0.02 MiB/min from 330 s; in flight at most 309 by 60 s, 342 by the end, +0.01 MiB/min from 120 s while that held": the
 * client's own memory growth, its second half's, and (arrival and HTTP runs) the high-water mark of the load it follows, when the run was long enough to fit one.
 */
export function rssGrowthText(rss: RssFigures | undefined): string {
  if (!rss || rss.growth_mib_per_min === null) return '';
  const late = rss.late_growth_mib_per_min === null || rss.late_growth_mib_per_min === undefined ? '' : `; ${mibPerMin(rss.late_growth_mib_per_min)} from ${rss.late_from_s} s`;
  const peak = rss.in_flight_peak === null || rss.in_flight_peak === undefined ? '' : `; in flight at most ${rss.in_flight_peak_at_from ?? '-'} by ${rss.from_s} s, ${rss.in_flight_peak} by the end`;
  const held = rss.held_growth_mib_per_min === null || rss.held_growth_mib_per_min === undefined ? '' : `, ${mibPerMin(rss.held_growth_mib_per_min)} from ${rss.held_from_s} s while that held`;
  return `, RSS ${mibPerMin(rss.growth_mib_per_min)} from ${rss.from_s} s over ${rss.span_s} s${late}${peak}${held} (client, least-squares slope)`;
}

/** The server's own histograms over the run, each beside the client's figure of its kind. */
export function renderServerMetrics(m: ServerMetricsSummary): string[] {
  const v = (x: number | null | undefined, unit: string) => (x === null || x === undefined ? '-' : `${x}${unit === 'ms' ? ' ms' : ''}`);
  const scrapes = `${m.scrapes.ok} scrapes${m.scrapes.failed > 0 ? `, ${m.scrapes.failed} failed (${m.scrapes.first_failure})` : ''}`;
  const lines = [`server /metrics (${m.url}, ${scrapes}; bucket deltas over the run, the server's clock and buckets):`];
  const names = Object.keys(m.histograms);
  if (names.length === 0) lines.push(`  no known latency histogram in its exposition${m.absent.length > 0 ? `; absent: ${m.absent.join(', ')}` : ''}`);
  for (const name of names) {
    const h = m.histograms[name];
    const c = h.client ? `; client ${h.client.figure} p50 ${v(h.client.p50, h.client.unit)} p99 ${v(h.client.p99, h.client.unit)} (n ${h.client.count})` : '';
    lines.push(`  ${name}: p50 ${v(h.p50, h.unit)} p90 ${v(h.p90, h.unit)} p99 ${v(h.p99, h.unit)} (n ${h.count})${c}`);
  }
  for (const [name, g] of Object.entries(m.gauges ?? {})) lines.push(`  ${name} (${g.kind}): mean ${g.mean} max ${g.max} last ${g.last}${g.increase !== undefined ? `, increase ${g.increase}` : ''} (${g.n} scrapes)`);
  return lines;
}

/** "client loop stalls over 50 ms: 2 (gc 1, disk_wait 1); sampler …": each stall's cause, counted, and what the sampler cost. */
export function renderStalls(st: StallsSummary): string {
  const causes = Object.entries(st.by_cause)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const s = st.sampler;
  const own = s ? `; sampler (its own process): ${s.looks} looks every ${s.interval_ms} ms, its CPU ${s.cpu_cores ?? '-'} cores` : '; no sampler account';
  return `client loop stalls over ${st.threshold_ms} ms: ${st.count}${causes ? ` (${causes})` : ''}${own}`;
}
