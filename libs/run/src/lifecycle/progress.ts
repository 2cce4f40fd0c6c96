import { every, timersOn, type Clock } from '@duplex-bench/pacer';
import type { Subscription } from 'rxjs';
import type { RssFigures } from '@duplex-bench/metrics';

export interface ProgressFigures {
  active: number;
  sent: number;
  late: number;
  loop_max_ms: number | null;
  /** The client's resident memory, and its growth once the warm-up is over. */
  rss?: RssFigures;
}

/** "+0.31 MiB/min": a memory growth, signed. */
export function mibPerMin(growth: number): string {
  return `${growth >= 0 ? '+' : ''}${growth.toFixed(2)} MiB/min`;
}

/** " | RSS 212 MiB, +0.31 MiB/min": the client's memory on the live line. */
export function rssLive(rss: RssFigures | undefined): string {
  if (!rss || rss.now_mib === null) return '';
  const growth = rss.growth_mib_per_min === null ? '' : `, ${mibPerMin(rss.growth_mib_per_min)}`;
  return ` | RSS ${rss.now_mib.toFixed(0)} MiB${growth}`;
}

/** A one-line live status on stderr, redrawn each second; only on a terminal, and never with --quiet. */
export class Progress {
  private redraws: Subscription | null = null;
  private drawn = false;

  constructor(
    private readonly out: { write(s: string): unknown; isTTY?: boolean },
    private readonly quiet: boolean,
    private readonly clock: Clock,
  ) {}

  start(read: () => ProgressFigures): void {
    if (this.quiet || !this.out.isTTY) return;
    const start_s = this.clock.now_s();
    this.redraws = every(timersOn(this.clock), 1000, { background: true }).subscribe(() => {
      const f = read();
      const lag = f.loop_max_ms === null ? '-' : `${f.loop_max_ms.toFixed(1)} ms`;
      this.out.write(
        `\r\x1b[K${(this.clock.now_s() - start_s).toFixed(0)} s | ${f.active} sessions streaming | ${f.sent} packets sent | ${f.late} late | client loop lag max ${lag}${rssLive(f.rss)}`,
      );
      this.drawn = true;
    });
  }

  stop(): void {
    this.redraws?.unsubscribe();
    this.redraws = null;
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }
}
