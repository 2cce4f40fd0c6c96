import { Agent as HttpAgent, get as httpGet } from 'node:http';
import { Agent as HttpsAgent, get as httpsGet } from 'node:https';
import { TIME_PATH } from '@duplex-bench/protocol';


/** This process's offset to a reference clock, NTP-style from the exchange with the smallest round trip. */
export interface ClockOffset {
  reference: string;
  /** Reference time minus this process's wall clock, ms. */
  offset_ms: number;
  /** Half that round trip: the reference was read somewhere inside it. */
  uncertainty_ms: number;
  rtt_ms: number;
  samples: number;
}

/** The reference clock's URL on a realtime server's host and port: ws → http, wss → https. */
export function timeUrlOf(wsUrl: string): string {
  const u = new URL(wsUrl);
  return `${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}${TIME_PATH}`;
}

function fetchEpochMs(url: string, agent: HttpAgent, timeout_ms: number): Promise<number> {
  const get = url.startsWith('https:') ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const req = get(url, { agent, timeout: timeout_ms }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const epoch_ms = (JSON.parse(body || '{}') as { epoch_ms?: unknown }).epoch_ms;
        if (res.statusCode === 200 && typeof epoch_ms === 'number') resolve(epoch_ms);
        else reject(new Error(`${url} answered ${res.statusCode} without epoch_ms`));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${timeout_ms} ms`)));
    req.on('error', reject);
  });
}

/**
 * `samples` exchanges with the reference over one kept-alive connection: each reads this wall clock
 * before (t0) and after (t3) asking, and the reference's reading r lies between them, so
 * offset = r − (t0 + t3) / 2 is off by at most (t3 − t0) / 2. The exchange with the smallest round
 * trip is kept (the others waited on something).
 */
export async function estimateClockOffset(url: string, wallMs: () => number, samples = 8, timeout_ms = 2000): Promise<ClockOffset> {
  const agent = url.startsWith('https:') ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  try {
    let best: { rtt: number; offset: number } | null = null;
    await fetchEpochMs(url, agent, timeout_ms); // opens the connection: its handshake is no sample
    for (let i = 0; i < samples; i++) {
      const t0 = wallMs();
      const r = await fetchEpochMs(url, agent, timeout_ms);
      const t3 = wallMs();
      if (!best || t3 - t0 < best.rtt) best = { rtt: t3 - t0, offset: r - (t0 + t3) / 2 };
    }
    const b = best as { rtt: number; offset: number };
    const r3 = (v: number) => Math.round(v * 1000) / 1000;
    return { reference: url, offset_ms: r3(b.offset), uncertainty_ms: r3(b.rtt / 2 + 0.001), rtt_ms: r3(b.rtt), samples };
  } finally {
    agent.destroy();
  }
}
