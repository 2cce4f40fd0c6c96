/** What a barge-in reads of one item's audio on the playout clock, at a moment. */
export interface ItemPlayed {
  key: string;
  content_index: number;
  /** Its audio played by then, ms. */
  played_ms: number;
  /** Its audio received so far, ms. */
  received_ms: number;
}

interface ItemAudio {
  key: string;
  content_index: number;
  received_ms: number;
  /** Where its audio plays, seconds on the session's clock: [start, end] pairs, contiguous ones merged. */
  plays: number[];
}

/**
 * The session's playout clock, item by item: the model's audio plays from its first receipt on, in
 * order, each chunk after the one before it at its own rate, as libs/audio's ModelPlayout plays a
 * conversation's audio (the same rule, so the flows read the position the user hears); a gap in
 * arrival is an underrun, not a skip. An item is an OpenAI assistant item (`item_id`,
 * `content_index`) or a vLLM-Omni response. Per chunk only a few additions: the payload is never
 * decoded, its byte length is enough.
 */
export class ItemPlayout {
  private played_until_s = -Infinity;
  /** Items in the order their audio plays; earlier ones are dropped once a later one plays (`add`) or forgotten (`forget`). */
  private readonly items: ItemAudio[] = [];

  /** A chunk of `bytes` of PCM16 mono at `sample_rate` of item `key`, received at `received_s`. */
  add(received_s: number, key: string, content_index: number, bytes: number, sample_rate: number): void {
    const duration_s = (bytes >> 1) / sample_rate;
    if (duration_s <= 0) return;
    const start_s = Math.max(received_s, this.played_until_s);
    const end_s = start_s + duration_s;
    this.played_until_s = end_s;
    let item = this.items[this.items.length - 1];
    if (!item || item.key !== key || item.content_index !== content_index) {
      item = this.items.find((i) => i.key === key && i.content_index === content_index) ?? { key, content_index, received_ms: 0, plays: [] };
      if (item.plays.length === 0) this.items.push(item);
    }
    item.received_ms += duration_s * 1000;
    const last = item.plays.length - 1;
    if (last >= 1 && Math.abs(item.plays[last] - start_s) < 1e-9) item.plays[last] = end_s;
    else item.plays.push(start_s, end_s);
  }

  /**
   * The item whose audio plays at `t_s` (or, between items and after the last, the last one that
   * began playing by then), with its audio played and received; null before any played.
   */
  playingAt(t_s: number): ItemPlayed | null {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.plays[0] <= t_s) return this.read(item, t_s);
    }
    return null;
  }

  /** Item `key`'s audio played by `t_s` and received, ms (0 and 0 for one with no audio). */
  played(key: string, t_s: number, content_index = 0): ItemPlayed {
    const item = this.items.find((i) => i.key === key && i.content_index === content_index);
    return item ? this.read(item, t_s) : { key, content_index, played_ms: 0, received_ms: 0 };
  }

  /** Items before the one playing at `t_s` play no more: dropped, so a long session keeps a few. */
  dropPlayedBefore(t_s: number): void {
    let playing = -1;
    for (let i = this.items.length - 1; i >= 0; i--) {
      if (this.items[i].plays[0] <= t_s) {
        playing = i;
        break;
      }
    }
    if (playing > 0) this.items.splice(0, playing);
  }

  /** Item `key` is of no more interest (vLLM-Omni: a finished response whose audio was all acknowledged). */
  forget(key: string): void {
    for (let i = this.items.length - 1; i >= 0; i--) if (this.items[i].key === key) this.items.splice(i, 1);
  }

  private read(item: ItemAudio, t_s: number): ItemPlayed {
    // Played out: all of it, exactly (a sum of segments can fall a hair short of the sum of chunks).
    if (t_s >= item.plays[item.plays.length - 1]) return { key: item.key, content_index: item.content_index, played_ms: item.received_ms, received_ms: item.received_ms };
    let played_s = 0;
    for (let i = 0; i < item.plays.length; i += 2) {
      const start = item.plays[i];
      if (start >= t_s) break;
      played_s += Math.min(item.plays[i + 1], t_s) - start;
    }
    return { key: item.key, content_index: item.content_index, played_ms: played_s * 1000, received_ms: item.received_ms };
  }
}
