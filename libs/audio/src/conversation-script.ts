import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** A conversation script the probe cannot follow: the message names the file and the step. */
export class ConversationError extends Error {
  override readonly name = 'ConversationError';
  constructor(
    readonly code: 'NO_SUCH_SCRIPT' | 'BAD_SCRIPT',
    message: string,
  ) {
    super(message);
  }
}

/** What the user should see the model do after a step: stop talking, not take the turn, keep talking. */
export type StepExpect = 'stop' | 'hold' | 'continue';

/** One step of a script; the microphone streams silence whenever no utterance plays. */
export type ConversationStep =
  /** An utterance: `file` is an absolute path. `expect` marks a barge-in (stop) or a backchannel (continue). */
  | { kind: 'say'; file: string; expect?: 'stop' | 'continue' }
  /** Silence until the model's answer is over, at most `max_s`. */
  | { kind: 'listen'; until: 'model_done'; max_s: number }
  /** Silence until `ms` of the model's speech has played, at most `max_s`. */
  | { kind: 'listen'; until: 'model_speech'; ms: number; max_s: number }
  /** Silence of a fixed length; `expect: hold` marks a pause inside the user's turn. */
  | { kind: 'silence'; ms: number; expect?: 'hold' };

export interface ConversationScript {
  name: string;
  /** The file it was read from. */
  file: string;
  steps: ConversationStep[];
}

/** A listen's bound when the script gives none, seconds. */
export const DEFAULT_LISTEN_MAX_S = 15;

/** Names of the scripts that ship with the kit, each `<name>.yaml` in the speech directory. */
export const BUILT_IN_CONVERSATIONS = ['default'] as const;

/**
 * The directory of the kit's speech and built-in scripts: libs/audio/speech beside the sources,
 * or dist/speech beside the bundle (tools/build.ts copies it there).
 */
export function speechDir(): string {
  const candidates = [join(__dirname, '..', 'speech'), join(__dirname, 'speech')];
  return candidates.find((dir) => existsSync(join(dir, 'default.yaml'))) ?? candidates[0];
}

/** Reads `--conversation NAME|FILE`: a built-in name, or a YAML or JSON file. Throws ConversationError. */
export async function readConversation(name_or_file: string): Promise<ConversationScript> {
  const builtIn = (BUILT_IN_CONVERSATIONS as readonly string[]).includes(name_or_file);
  const file = builtIn ? join(speechDir(), `${name_or_file}.yaml`) : resolve(name_or_file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new ConversationError('NO_SUCH_SCRIPT', `--conversation ${name_or_file}: no such file (built-in scripts: ${BUILT_IN_CONVERSATIONS.join(', ')})`);
  }
  let doc: unknown;
  try {
    // YAML is a superset of JSON: one reader for both, loaded only when a script is read.
    const { parse } = await import('yaml');
    doc = parse(text);
  } catch (err) {
    throw new ConversationError('BAD_SCRIPT', `${file}: not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const script = parseConversation(doc, file);
  for (const step of script.steps) {
    if (step.kind === 'say' && !existsSync(step.file)) throw new ConversationError('BAD_SCRIPT', `${file}: say: no such file ${step.file}`);
  }
  return script;
}

const STEP_KEYS: Record<string, string[]> = { say: ['say', 'expect'], listen: ['listen'], silence_ms: ['silence_ms', 'expect'] };

/** A script from its parsed document; WAV paths resolve against the script's directory. Throws ConversationError. */
export function parseConversation(doc: unknown, file: string): ConversationScript {
  const bad = (where: string, what: string) => new ConversationError('BAD_SCRIPT', `${file}: ${where}: ${what}`);
  if (!isObject(doc)) throw bad('the script', 'expected a mapping with name and steps');
  if (!Array.isArray(doc.steps) || doc.steps.length === 0) throw bad('steps', 'expected a list of at least one step');
  const steps = doc.steps.map((raw, i): ConversationStep => {
    const where = `step ${i + 1}`;
    if (!isObject(raw)) throw bad(where, 'expected a mapping (say, listen or silence_ms)');
    const kind = Object.keys(STEP_KEYS).filter((k) => k in raw);
    if (kind.length !== 1) throw bad(where, `expected exactly one of say, listen, silence_ms; found ${Object.keys(raw).join(', ') || 'none'}`);
    const extra = Object.keys(raw).filter((k) => !STEP_KEYS[kind[0]].includes(k));
    if (extra.length > 0) throw bad(where, `unknown key ${extra[0]}`);
    if ('say' in raw) {
      if (typeof raw.say !== 'string' || raw.say === '') throw bad(where, 'say: expected a WAV path');
      if (raw.expect !== undefined && raw.expect !== 'stop' && raw.expect !== 'continue') throw bad(where, `say: expect must be stop or continue, got ${String(raw.expect)}`);
      const path = isAbsolute(raw.say) ? raw.say : join(dirname(file), raw.say);
      return raw.expect === undefined ? { kind: 'say', file: path } : { kind: 'say', file: path, expect: raw.expect };
    }
    if ('silence_ms' in raw) {
      if (!positive(raw.silence_ms)) throw bad(where, `silence_ms: expected a number of ms above 0, got ${String(raw.silence_ms)}`);
      if (raw.expect !== undefined && raw.expect !== 'hold') throw bad(where, `silence_ms: expect must be hold, got ${String(raw.expect)}`);
      return raw.expect === undefined ? { kind: 'silence', ms: raw.silence_ms } : { kind: 'silence', ms: raw.silence_ms, expect: 'hold' };
    }
    const listen = raw.listen;
    if (!isObject(listen)) throw bad(where, 'listen: expected {until: model_done|model_speech, ms, max_s}');
    const unknown = Object.keys(listen).filter((k) => !['until', 'ms', 'max_s'].includes(k));
    if (unknown.length > 0) throw bad(where, `listen: unknown key ${unknown[0]}`);
    const max_s = listen.max_s ?? DEFAULT_LISTEN_MAX_S;
    if (!positive(max_s)) throw bad(where, `listen: max_s must be a number of seconds above 0, got ${String(max_s)}`);
    if (listen.until === 'model_done') {
      if (listen.ms !== undefined) throw bad(where, 'listen: ms goes with until: model_speech');
      return { kind: 'listen', until: 'model_done', max_s };
    }
    if (listen.until === 'model_speech') {
      if (!positive(listen.ms)) throw bad(where, `listen: until model_speech needs ms above 0, got ${String(listen.ms)}`);
      return { kind: 'listen', until: 'model_speech', ms: listen.ms, max_s };
    }
    throw bad(where, `listen: until must be model_done or model_speech, got ${String(listen.until)}`);
  });
  const name = typeof doc.name === 'string' && doc.name !== '' ? doc.name : (file.split('/').pop() ?? file).replace(/\.(ya?ml|json)$/, '');
  return { name, file, steps };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function positive(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0;
}
