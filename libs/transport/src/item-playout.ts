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
  /** When its audio began to play, seconds on the session's clock. */
  first_s: number;
  /** Its audio in stretches that played out before the last underrun, seconds: folded, so a long item keeps two numbers. */
  settled_s: number;
  /** Where its audio plays since its last underrun: [start, end], seconds on the session's clock. */
  plays: [number, number];
}

/**
 * The session's playout clock, item by item: the model's audio plays from its first receipt on, in
 * order, each chunk after the one before it at its own rate, as libs/audio's ModelPlayout plays a
 * conversation's audio (the same rule, so the flows read the position the user hears); a gap in
 * arrival is an underrun, not a skip. An item is an OpenAI assistant item (`item_id`,
 * `content_index`) or a vLLM-Omni response. Per chunk only a few additions: the payload is never
 * decoded, its byte length is enough. Reads are at the present (the time of the last chunk's
 * receipt or later), so an item keeps two numbers however often its audio underran.
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
    const last = this.items[this.items.length - 1];
    const item = last && last.key === key && last.content_index === content_index ? last : this.items.find((i) => i.key === key && i.content_index === content_index);
    if (!item) {
      this.items.push({ key, content_index, received_ms: duration_s * 1000, first_s: start_s, settled_s: 0, plays: [start_s, end_s] });
      return;
    }
    item.received_ms += duration_s * 1000;
    if (Math.abs(item.plays[1] - start_s) < 1e-9) {
      item.plays[1] = end_s;
      return;
    }
    // An underrun: this chunk plays from its receipt, now, so all that came before it has played
    // for every read from here on (reads are at the present or later).
    item.settled_s += item.plays[1] - item.plays[0];
    item.plays = [start_s, end_s];
  }

  /**
   * The item whose audio plays at `t_s` (or, between items and after the last, the last one that
   * began playing by then), with its audio played and received; null before any played.
   */
  playingAt(t_s: number): ItemPlayed | null {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.first_s <= t_s) return this.read(item, t_s);
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
      if (this.items[i].first_s <= t_s) {
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
    const [start, end] = item.plays;
    if (t_s >= end) return { key: item.key, content_index: item.content_index, played_ms: item.received_ms, received_ms: item.received_ms };
    const played_s = item.settled_s + Math.max(0, t_s - start);
    return { key: item.key, content_index: item.content_index, played_ms: played_s * 1000, received_ms: item.received_ms };
  }
}
