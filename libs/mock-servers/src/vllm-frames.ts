/**
 * Camera frames as vLLM-Omni's duplex endpoint checks them. The facts, from vllm-project/vllm-omni:
 *
 * - `validate_realtime_video_frames` (vllm_omni/protocol/realtime/items.py@576bce30), run while an
 *   `input_audio_buffer.append` is decoded (protocol/realtime/audio_input.py@23b8f670
 *   `decode_audio_append`): at most 2 frames on one append ("one base base64 JPEG per ~1 s audio
 *   chunk, optionally followed by that unit's stacked composite"), each a non-empty base64 string
 *   of at most 4,000,000 characters whose head decodes to a JPEG or PNG, and no `max_slice_nums`
 *   but 1. A breach refuses the whole append, its audio too, as `invalid_video_frames`.
 * - The session's input-modality contract (engine/duplex/contracts.py `validate_append_modalities`,
 *   checked by engine/duplex/session/manager.py@0488663b before the append is submitted): frames on
 *   an append of a model whose required and optional input modalities do not list `video` refuse
 *   the append as `invalid_input_modality` ("This duplex model does not accept video_frames").
 * - An `input_image` item's URL is checked by the same function (engine/duplex/session/control.py@56344582),
 *   a breach refused as `invalid_image`.
 */

/** The most frames one append may carry. */
export const VLLM_MAX_FRAMES_PER_APPEND = 2;
/** The most base64 characters of one frame. */
export const VLLM_MAX_FRAME_BASE64 = 4_000_000;

/** What `validate_realtime_video_frames` says of an append's `video_frames` (and `max_slice_nums`): null when taken. */
export function videoFramesError(video_frames: unknown, max_slice_nums: unknown): string | null {
  if (max_slice_nums !== undefined && max_slice_nums !== null && max_slice_nums !== 1) return 'max_slice_nums is not selectable on the wire; Stage0 slices stacked units itself';
  if (!Array.isArray(video_frames)) return 'video_frames must be a list of base64-encoded images';
  const frames = video_frames.filter((f) => f !== null);
  if (frames.length > VLLM_MAX_FRAMES_PER_APPEND) return 'video_frames carries more than 2 frames for one append; send ~1 frame per 1 s chunk';
  for (const frame of frames) {
    if (typeof frame !== 'string' || frame.length === 0) return 'video_frames entries must be non-empty base64 strings';
    if (frame.length > VLLM_MAX_FRAME_BASE64) return 'video_frames entry exceeds 4MB base64; reduce capture resolution or JPEG quality';
    const head = frame.slice(0, 64);
    const header = Buffer.from(head, 'base64');
    const jpeg = header[0] === 0xff && header[1] === 0xd8;
    const png = header.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    if (!jpeg && !png) return 'video_frames entries must be JPEG or PNG images';
  }
  return null;
}
