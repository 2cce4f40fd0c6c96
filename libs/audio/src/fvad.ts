import { readFile } from 'node:fs/promises';

/** The WebRTC VAD could not be loaded, or was given settings it does not take. */
export class VoiceActivityError extends Error {
  override readonly name = 'VoiceActivityError';
  readonly code = 'VOICE_ACTIVITY';
  constructor(
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The package whose WebRTC VAD (libfvad) we run, and its version (pinned in package.json). */
export const FVAD_PACKAGE = '@echogarden/fvad-wasm';
export const FVAD_VERSION = '0.2.0';

/**
 * @echogarden/fvad-wasm 0.2.0 ships libfvad as fvad.wasm with an ES-module loader (fvad.js reads
 * import.meta.url). Node 20 cannot require() an ES module and ts-jest compiles import() into
 * require(), so we instantiate the package's fvad.wasm here. These are the minified names its
 * fvad.js binds (emscripten, -sEXPORTED_FUNCTIONS in the package's Makefile); a build that moved
 * them fails the parameter-count check below, not silently.
 */
const EXPORTS = {
  memory: 'c',
  ctors: 'd',
  fvad_new: 'e',
  malloc: 'f',
  fvad_free: 'h',
  free: 'i',
  fvad_set_mode: 'j',
  fvad_set_sample_rate: 'k',
  fvad_process: 'l',
} as const;
const PARAMS: Record<Exclude<keyof typeof EXPORTS, 'memory'>, number> = {
  ctors: 0,
  fvad_new: 0,
  malloc: 1,
  fvad_free: 1,
  free: 1,
  fvad_set_mode: 2,
  fvad_set_sample_rate: 2,
  fvad_process: 3,
};

type Fn = (...args: number[]) => number;
/** What we use of WebAssembly, typed here: the project's ES2022 lib (no DOM) declares none of it. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
interface Fvad {
  memory: WasmMemory;
  fvad_new: Fn;
  malloc: Fn;
  fvad_free: Fn;
  free: Fn;
  fvad_set_mode: Fn;
  fvad_set_sample_rate: Fn;
  fvad_process: Fn;
}

let loading: Promise<Fvad> | undefined;

async function instantiate(): Promise<Fvad> {
  const path = require.resolve(`${FVAD_PACKAGE}/fvad.wasm`);
  // The memory is the instance's own export, known once instantiated; growth asks for it later.
  const heap: { memory?: WasmMemory } = {};
  const imports = {
    a: {
      // ___assert_fail(condition, file, line, func): libfvad asserts nothing on valid input.
      a: () => {
        throw new VoiceActivityError('libfvad failed an assertion', { path });
      },
      // _emscripten_resize_heap(bytes): grow the memory to hold `bytes`; 1 when it did.
      b: (bytes: number) => {
        if (!heap.memory) return 0;
        heap.memory.grow(Math.ceil((bytes - heap.memory.buffer.byteLength) / 65536));
        return 1;
      },
    },
  };
  const { instance } = await wasm.instantiate(await readFile(path), imports);
  const e = instance.exports;
  for (const [name, params] of Object.entries(PARAMS)) {
    const fn = e[EXPORTS[name as keyof typeof PARAMS]];
    if (typeof fn !== 'function' || fn.length !== params) {
      throw new VoiceActivityError(`${path} is not the fvad.wasm of ${FVAD_PACKAGE} ${FVAD_VERSION}: no ${name} with ${params} parameters`, { path });
    }
  }
  const memory = e[EXPORTS.memory] as WasmMemory;
  heap.memory = memory;
  (e[EXPORTS.ctors] as Fn)();
  const fn = (name: keyof typeof PARAMS): Fn => e[EXPORTS[name]] as Fn;
  return {
    memory,
    fvad_new: fn('fvad_new'),
    malloc: fn('malloc'),
    fvad_free: fn('fvad_free'),
    free: fn('free'),
    fvad_set_mode: fn('fvad_set_mode'),
    fvad_set_sample_rate: fn('fvad_set_sample_rate'),
    fvad_process: fn('fvad_process'),
  };
}

/** One libfvad detector: a mode, a rate, and frames of one length. */
export class FvadDetector {
  private handle: number;
  private readonly frame_ptr: number;
  /** The frame's place in the wasm memory. */
  private view: Int16Array;

  private constructor(
    private readonly fvad: Fvad,
    readonly frame_samples: number,
  ) {
    this.handle = fvad.fvad_new();
    this.frame_ptr = fvad.malloc(frame_samples * 2);
    if (this.handle === 0 || this.frame_ptr === 0) throw new VoiceActivityError('libfvad could not allocate a detector');
    this.view = new Int16Array(fvad.memory.buffer, this.frame_ptr, frame_samples);
  }

  /** A detector at `sample_rate` (8, 16, 32 or 48 kHz) and `mode` (0-3), for frames of `frame_samples`. */
  static async open(sample_rate: number, mode: number, frame_samples: number): Promise<FvadDetector> {
    loading ??= instantiate();
    const d = new FvadDetector(await loading, frame_samples);
    if (d.fvad.fvad_set_sample_rate(d.handle, sample_rate) !== 0 || d.fvad.fvad_set_mode(d.handle, mode) !== 0) {
      d.close();
      throw new VoiceActivityError(`libfvad refuses ${sample_rate} Hz or mode ${mode}`, { sample_rate, mode });
    }
    return d;
  }

  /** Whether `frame` (frame_samples of PCM16) is speech. */
  isSpeech(frame: Int16Array): boolean {
    // The memory's buffer is replaced when it grows, and the view with it.
    if (this.view.buffer !== this.fvad.memory.buffer) this.view = new Int16Array(this.fvad.memory.buffer, this.frame_ptr, this.frame_samples);
    this.view.set(frame);
    const r = this.fvad.fvad_process(this.handle, this.frame_ptr, this.frame_samples);
    if (r < 0) throw new VoiceActivityError(`libfvad refuses a frame of ${this.frame_samples} samples`, { frame_samples: this.frame_samples });
    return r === 1;
  }

  /** Frees the detector; it takes no more frames. */
  close(): void {
    if (this.handle === 0) return;
    this.fvad.fvad_free(this.handle);
    this.fvad.free(this.frame_ptr);
    this.handle = 0;
  }
}
